//! Template learning with an index: the batch's pages and the index's sample of their
//! hosts' earlier pages, learned from together (see `neardup_io::index` templates).
//!
//! With an index, the learning pass sends pages rather than their occurrences: each
//! worker sends its batch's web pages ([`PageRow::of_batch`]) and its share of the index's
//! sampled pages ([`read_index_share`]), exchanged by host into a stage that reads them in
//! (host, rank) order ([`SampleDrain`]). For each host it emits the occurrences of every
//! batch page and of the index's sample of it (the [`TEMPLATE_PAGES_PER_HOST`] earlier
//! pages of least rank, forgotten ones left out): all of them when the host has a page in
//! the batch, else those of the corpus-wide rule only (a notice on many hosts counts every
//! host an earlier batch saw it on); and
//! it writes the batch's own sample of each host into this worker's templates part of the
//! new generation. The occurrences then go on to learning as in a run without an index,
//! so a run over an empty index learns what a run without one learns. Holds: the spill
//! limit (the pages, sorted), one host's sample of the index, and a batch of rows to
//! write.

use std::collections::HashSet;
use std::path::PathBuf;

use neardup_io::index::{
    HostSample, IndexRef, TEMPLATE_PAGES_PER_HOST, TemplatePage, TemplatePartWriter, TemplateRows,
};
use neardup_text::{BoilerplateRule, LineKey, LineScratch, Occurrence};
use serde::{Deserialize, Serialize};

use crate::operators::collect::Drain;
use crate::settings::config::IndexPlan;
use crate::storage::spill::{MemSize, SpillError};

/// A web page for template learning, ordered by host and rank.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct PageRow {
    /// Its host's key.
    host: u64,
    /// Its rank among the host's pages (the key of its canonical URL).
    rank: u64,
    /// Whether it is of this run's batch (else of the index's sample).
    batch: bool,
    /// Its generation (this run's for the batch).
    generation: u32,
    /// Its `doc_id` in that generation's run.
    doc: u64,
    /// Its URL.
    url: String,
    /// Its lines' keys and canonical lengths.
    lines: Vec<(u64, u32)>,
}

impl MemSize for PageRow {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<PageRow>() + self.url.capacity() + self.lines.capacity() * 16
    }
}

impl PageRow {
    /// A page of the batch with URL `url` and the keys of its lines, as the first read
    /// computed them; `None` when the URL has no host (it teaches no template).
    pub(crate) fn of_batch(
        generation: u32,
        doc: u64,
        url: &str,
        lines: &[Option<LineKey>],
        seed: u64,
    ) -> Option<PageRow> {
        let host = neardup_text::host_key(url, seed)?;
        Some(PageRow {
            host,
            rank: neardup_text::url_key(url, seed),
            batch: true,
            generation,
            doc,
            url: url.to_string(),
            lines: lines.iter().flatten().map(|k| (k.key, k.chars)).collect(),
        })
    }

    /// The host the page is exchanged by.
    pub(crate) fn host(&self) -> u64 {
        self.host
    }

    fn from_index(page: TemplatePage) -> PageRow {
        let TemplatePage { host, rank, generation, doc, url, lines } = page;
        PageRow { host, rank, batch: false, generation, doc, url, lines }
    }

    fn into_index(self) -> TemplatePage {
        let PageRow { host, rank, generation, doc, url, lines, .. } = self;
        TemplatePage { host, rank, generation, doc, url, lines }
    }
}

/// Sends the index's sampled pages that worker `index` of `peers` reads (its share of the
/// committed templates parts), passing over forgotten documents.
///
/// # Errors
/// The index's read errors.
pub(crate) fn read_index_share(
    plan: &IndexPlan,
    index: usize,
    peers: usize,
    mut send: impl FnMut(PageRow),
) -> Result<(), neardup_io::Error> {
    let forgotten: HashSet<IndexRef> = plan
        .manifest
        .generations
        .iter()
        .flat_map(|g| g.forgotten.iter().map(|&doc| IndexRef { generation: g.number, doc }))
        .collect();
    let mut parts = Vec::new();
    for segment in plan.manifest.segments() {
        let dir = plan.dir.join(&segment.folder);
        let count = plan.manifest.generation(segment.first()).map_or(0, |g| g.template_parts);
        parts.extend((0..count).map(|part| (dir.clone(), part)));
    }
    for (dir, part) in parts.into_iter().skip(index).step_by(peers.max(1)) {
        let mut rows = TemplateRows::open(&dir, part)?;
        while let Some(row) = rows.next_row()? {
            if !forgotten.contains(&row.at()) {
                send(PageRow::from_index(row));
            }
        }
    }
    Ok(())
}

/// Reads pages in (host, rank) order and emits the occurrences learning counts; writes the
/// batch's sample of each host into `part` of the new generation.
pub(crate) struct SampleDrain {
    rule: BoilerplateRule,
    seed: u64,
    /// The new generation's folder and this worker's part in it (none without an index,
    /// where no page arrives).
    out: Option<(PathBuf, u32)>,
    writer: Option<TemplatePartWriter>,
    to_write: Vec<TemplatePage>,
    host: Option<u64>,
    host_in_batch: bool,
    /// The index's sample of the current host, emitted when the host has a batch page.
    earlier: Vec<PageRow>,
    index_sample: HostSample,
    batch_sample: HostSample,
    scratch: LineScratch,
    lines: Vec<Option<LineKey>>,
    occurrences: Vec<Occurrence>,
}

impl SampleDrain {
    /// A drain for `rule` and `seed` that writes templates part `part` of `plan`'s new
    /// generation.
    pub(crate) fn new(
        rule: BoilerplateRule,
        seed: u64,
        plan: Option<&IndexPlan>,
        part: u32,
    ) -> Self {
        SampleDrain {
            rule,
            seed,
            out: plan.map(|plan| (plan.new_generation_dir(), part)),
            writer: None,
            to_write: Vec::new(),
            host: None,
            host_in_batch: false,
            earlier: Vec::new(),
            index_sample: HostSample::default(),
            batch_sample: HostSample::default(),
            scratch: LineScratch::default(),
            lines: Vec::new(),
            occurrences: Vec::new(),
        }
    }

    /// Emits the occurrences of `page`: all of them, or (`corpus_only`) those the
    /// corpus-wide rule counts and the host's URL count.
    fn emit_page(&mut self, page: &PageRow, corpus_only: bool, emit: &mut dyn FnMut(Occurrence)) {
        self.lines.clear();
        self.lines.extend(page.lines.iter().map(|&(key, chars)| Some(LineKey { key, chars })));
        let (rule, seed) = (&self.rule, self.seed);
        let out = &mut self.occurrences;
        neardup_text::occurrences(&self.lines, &page.url, rule, seed, &mut self.scratch, out);
        let counted = |o: &Occurrence| {
            !corpus_only || o.0 == neardup_text::CORPUS_SCOPE || o.1 == neardup_text::URL_MARKER
        };
        self.occurrences.drain(..).filter(counted).for_each(&mut *emit);
    }

    /// Ends the current host: its sample of the index counts whole when it had a batch
    /// page; otherwise only for what the corpus-wide rule counts (lines that many hosts
    /// share, and the host among the hosts), as one run over every batch counts it.
    fn end_host(&mut self, emit: &mut dyn FnMut(Occurrence)) {
        let earlier = std::mem::take(&mut self.earlier);
        let corpus_only = !self.host_in_batch;
        earlier.iter().for_each(|page| self.emit_page(page, corpus_only, emit));
        self.host_in_batch = false;
    }

    fn write(&mut self, page: TemplatePage) -> Result<(), SpillError> {
        self.to_write.push(page);
        if self.to_write.len() >= 4096 {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), SpillError> {
        let Some((dir, part)) = &self.out else { return Ok(()) };
        if self.to_write.is_empty() {
            return Ok(());
        }
        let path = neardup_io::index::template_part_path(dir, *part);
        let failed = |e: neardup_io::Error| SpillError::at(&path, std::io::Error::other(e));
        if self.writer.is_none() {
            self.writer = Some(TemplatePartWriter::create(dir, *part).map_err(failed)?);
        }
        let writer = self.writer.as_mut().expect("made above");
        writer.write(&self.to_write).map_err(failed)?;
        self.to_write.clear();
        Ok(())
    }
}

impl Drain<PageRow, Occurrence> for SampleDrain {
    fn item(&mut self, page: PageRow, emit: &mut dyn FnMut(Occurrence)) -> Result<(), SpillError> {
        if self.host != Some(page.host) {
            self.end_host(emit);
            self.host = Some(page.host);
        }
        if page.batch {
            self.host_in_batch = true;
            self.emit_page(&page, false, emit);
            if self.batch_sample.keeps(page.host, page.rank) {
                self.write(page.into_index())?;
            }
        } else if self.index_sample.keeps(page.host, page.rank) {
            debug_assert!(self.earlier.len() < TEMPLATE_PAGES_PER_HOST);
            self.earlier.push(page);
        }
        Ok(())
    }

    fn end(&mut self, emit: &mut dyn FnMut(Occurrence)) -> Result<(), SpillError> {
        self.end_host(emit);
        self.flush()?;
        if let Some((dir, part)) = &self.out {
            // Every worker writes its part, empty when it sampled no host: a rerun that
            // replays the passes knows the sample is whole when every part is there.
            let path = neardup_io::index::template_part_path(dir, *part);
            let failed = |e: neardup_io::Error| SpillError::at(&path, std::io::Error::other(e));
            let writer = match self.writer.take() {
                Some(writer) => writer,
                None => TemplatePartWriter::create(dir, *part).map_err(failed)?,
            };
            writer.finish().map_err(failed)?;
        }
        Ok(())
    }
}
