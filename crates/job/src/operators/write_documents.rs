//! Builds and writes this worker's `documents/` part: one row per record whose home is this
//! worker, in `DocId` order.
//!
//! Partitioning: verdicts (rejects, repeated ids, cluster assignments) and, with
//! paragraph-level dedup, the paragraphs left out of kept documents and the first
//! occurrences a later document repeats (`DocItem`), exchanged on `DocId`; the metadata of
//! accepted documents comes from the document store of the same worker. Emits
//! (`Written`): the kept documents (only when the deduplicated dataset is asked for) and,
//! with paragraph-level dedup and an index, the paragraphs kept documents hold.
//! Holds: at most its spill limit of items, one batch of rows (and of `paragraphs/` rows)
//! and the last row, which a document's paragraphs may still count into; it reads the
//! metadata file sequentially and writes rows as it goes. With an index, it also reads the
//! store's signatures alongside and writes the representatives to this worker's part of the
//! new generation (`docs/part-<worker>`: a document's home worker is its part).

use std::sync::Arc;

use neardup_core::DocId;
use neardup_io::{
    Decision, DocumentRow, DocumentsWriter, OwnText, ParagraphRow, ParagraphsWriter, Reason,
    RejectedRecord, Repeated,
};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Keyed, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::operators::index::docs::IndexDocs;
use crate::operators::sink::{Batched, PartSink};
use crate::reporting::stats::ClusterKept;
use crate::settings::config::JobConfig;
use crate::settings::spec::Removal;
use crate::storage::records::{
    Assignment, DocItem, DocItemKey, DocMeta, ParagraphKey, RepeatedParagraph, Verdict,
};
use crate::storage::routing::route_doc;
use crate::storage::spill::{SortedIter, SpillError};

/// Byte ranges (offset, length) of a document's text that paragraph-level dedup left out.
pub type Cuts = Vec<(u64, u64)>;

/// A kept document, with the ranges of its text that paragraph-level dedup left out.
pub type KeptDoc = (DocId, Cuts);

/// What `WriteDocuments` sends on: a kept document for the deduplicated dataset, or, with
/// paragraph-level dedup and an index, a paragraph whose first occurrence a kept document
/// holds (keyed by the paragraph's key, the document and its number; the document's id),
/// for the new generation's `paragraphs/`.
#[derive(Clone, Debug)]
pub enum Written {
    /// A kept document.
    Kept(KeptDoc),
    /// A first occurrence a kept document holds.
    Held(Keyed<ParagraphKey, String>),
}

/// What the last row's document gathers until a later document's item comes.
#[derive(Default)]
struct Gathered {
    /// The ranges of its text left out.
    cuts: Cuts,
    /// The numbers of its paragraphs left out, ascending.
    left_out: Vec<u32>,
    /// With an index: its paragraphs' numbers and keys.
    paragraphs: Vec<(u32, u64)>,
    /// Whether it holds the first occurrence of a paragraph a later document left out.
    held_later: bool,
    /// The characters of its text as paragraphs are compared (what its paragraphs left
    /// out are a share of).
    paragraph_chars: u64,
}

/// Writes `documents/`.
pub trait WriteDocuments<'s, T: Timestamp> {
    /// Joins verdicts with the stored metadata into rows and writes them; emits the kept
    /// documents when the job writes the deduplicated dataset; with an index, writes this
    /// worker's part of the new generation's documents.
    fn write_documents(
        self,
        env: &OperatorEnv,
        sources: Arc<[Arc<str>]>,
        job: &JobConfig,
    ) -> StreamVec<'s, T, Written>;
}

struct Assemble {
    meta: SortedIter<Keyed<DocId, DocMeta>>,
    next_meta: Option<Keyed<DocId, DocMeta>>,
    /// The last row made, written once a later document's item comes, and what its
    /// document gathers until then.
    current: Option<DocumentRow>,
    gathered: Gathered,
    /// The `documents/` part.
    documents: Batched<DocumentsWriter>,
    /// With paragraph-level dedup: the `paragraphs/` part, and the share of a document's
    /// characters left out above which it is removed.
    paragraphs: Option<Batched<ParagraphsWriter>>,
    max_repeated_share: f64,
    sink: PartSink,
    sources: Arc<[Arc<str>]>,
    emit_kept: bool,
    removal: Removal,
    index: Option<IndexDocs>,
}

/// Whether a stored document whose cluster assignment is `assignment` (`None`: alone in
/// its cluster) is kept under `removal`: what its row says (`Assemble::accepted_row`) until
/// paragraph-level dedup may remove it as mostly repeated (`Assemble::write_row`).
pub(crate) fn keeps(doc: DocId, assignment: Option<&Assignment>, removal: Removal) -> bool {
    let Some(a) = assignment else { return true };
    let unverified_stays = removal == Removal::Verified && !a.verified_with_kept;
    if a.indexed.is_some() { unverified_stays } else { a.kept == doc || unverified_stays }
}

impl Assemble {
    /// Adds `doc` to the index part, when the run has an index.
    fn index(
        &mut self,
        doc: DocId,
        meta: &DocMeta,
        assignment: Option<&Assignment>,
    ) -> Result<(), SpillError> {
        if let Some(index) = self.index.as_mut() {
            let source = &self.sources[doc.file_index() as usize];
            index.add(doc, meta, source, assignment, &self.sink)?;
        }
        Ok(())
    }

    /// The stored metadata of `doc`.
    ///
    /// # Panics
    /// If it is missing: every accepted document is stored on its home worker.
    fn take_meta(
        &mut self,
        doc: DocId,
        emit: &mut dyn FnMut(Written),
    ) -> Result<DocMeta, SpillError> {
        self.flush_singletons_before(doc, emit)?;
        match self.next_meta.take() {
            Some(m) if m.key == doc => Ok(m.value),
            _ => unreachable!("document {doc:?} has a verdict but no stored metadata"),
        }
    }

    /// Writes the rows of stored documents before `doc` that have no verdict: they are
    /// alone in their cluster.
    fn flush_singletons_before(
        &mut self,
        doc: DocId,
        emit: &mut dyn FnMut(Written),
    ) -> Result<(), SpillError> {
        loop {
            if self.next_meta.is_none() {
                match self.meta.next() {
                    Some(m) => self.next_meta = Some(m?),
                    None => return Ok(()),
                }
            }
            let m = self.next_meta.as_ref().expect("filled above");
            if m.key >= doc {
                return Ok(());
            }
            let m = self.next_meta.take().expect("present");
            self.index(m.key, &m.value, None)?;
            let gathered = self.gathered_of(&m.value);
            let row = self.accepted_row(m.key, m.value, None);
            self.push(row, gathered, emit);
        }
    }

    /// The row of an accepted document: kept, or removed as a duplicate of its cluster's
    /// kept document (`assignment`; `None` for a document in no cluster), counted in the
    /// sink's statistics.
    fn accepted_row(
        &self,
        doc: DocId,
        meta: DocMeta,
        assignment: Option<Assignment>,
    ) -> DocumentRow {
        let (removal, sources) = (self.removal, &self.sources);
        let index = self.index.as_ref().map(|i| &*i.plan);
        let mut stats = self.sink.stats.borrow_mut();
        let template_only = meta.web.as_deref().is_some_and(|w| w.own_text == OwnText::Absent);
        let unmatched = (!meta.matched).then_some(if template_only {
            Reason::BoilerplateOnly
        } else {
            Reason::TooFewFeatures
        });
        let mut row = DocumentRow {
            doc,
            id: Some(meta.id.clone()),
            source: sources[doc.file_index() as usize].clone(),
            decision: Decision::Keep,
            cluster: Some(meta.id.clone()),
            cluster_size: Some(1),
            duplicate_of: None,
            duplicate_of_run: None,
            reason: unmatched,
            detail: None,
            verified_with_kept: None,
            features: Some(meta.features),
            chars: Some(meta.chars),
            web: meta.web,
            repeated: None,
        };
        let keep = keeps(doc, assignment.as_ref(), removal);
        if self.paragraphs.is_some() && keep {
            row.repeated = Some(Repeated::default());
        }
        if let Some(a) = assignment {
            row.cluster_size = Some(a.cluster_size);
            if let Some(ik) = &a.indexed {
                // Joins a cluster of an earlier run, whose kept document stays kept.
                row.cluster = Some(ik.kept_id.clone());
                if removal == Removal::Verified && !a.verified_with_kept {
                    row.reason = Some(Reason::UnverifiedInCluster);
                    row.verified_with_kept = Some(false);
                } else {
                    row.decision = Decision::Remove;
                    row.duplicate_of = Some(ik.kept_id.clone());
                    row.duplicate_of_run = index.map(|p| p.run_of(ik.kept.generation).to_string());
                    row.reason = Some(if meta.content.get() == ik.kept_content {
                        Reason::ExactDuplicate
                    } else {
                        Reason::NearDuplicate
                    });
                    row.verified_with_kept = Some(a.verified_with_kept);
                    stats.index.removed += 1;
                    let kept = ClusterKept::Earlier(ik.kept);
                    stats.decisions.note_member(a.cluster_size, kept, &ik.kept_id, doc, &meta.id);
                }
                return row;
            }
            if a.kept == doc {
                stats.decisions.record_cluster(a.cluster_size, ClusterKept::ThisRun(doc), &meta.id);
                *stats.decisions.cluster_radii.entry(a.radius).or_default() += 1;
            } else if removal == Removal::Verified && !a.verified_with_kept {
                // Safety over recall: in the cluster, but never compared with its kept document.
                row.cluster = Some(a.kept_id);
                row.reason = Some(Reason::UnverifiedInCluster);
                row.verified_with_kept = Some(false);
            } else {
                row.decision = Decision::Remove;
                row.cluster = Some(a.kept_id.clone());
                row.duplicate_of = Some(a.kept_id);
                row.reason = Some(if meta.content == a.kept_content {
                    Reason::ExactDuplicate
                } else {
                    Reason::NearDuplicate
                });
                row.verified_with_kept = Some(a.verified_with_kept);
                let kept_id = row.cluster.as_deref().unwrap_or_default();
                stats.decisions.note_member(
                    a.cluster_size,
                    ClusterKept::ThisRun(a.kept),
                    kept_id,
                    doc,
                    &meta.id,
                );
                if !a.verified_with_kept {
                    stats.decisions.removed_not_verified_with_kept += 1;
                }
            }
        }
        debug_assert_eq!(row.decision == Decision::Keep, keep, "{row:?}");
        row
    }

    /// Makes `row` the current row, writing the one before it. `gathered`: what its
    /// document's metadata tells of its paragraphs ([`Assemble::gathered_of`]).
    fn push(&mut self, row: DocumentRow, gathered: Gathered, emit: &mut dyn FnMut(Written)) {
        let before_gathered = std::mem::replace(&mut self.gathered, gathered);
        if let Some(before) = self.current.replace(row) {
            self.write_row(before, before_gathered, emit);
        }
    }

    /// What a stored document brings to its row's gathering: the characters its
    /// paragraphs are a share of and, with an index, the numbers and keys of its paragraphs
    /// (those not left out go to the new generation if it is kept).
    fn gathered_of(&self, meta: &DocMeta) -> Gathered {
        let paragraphs = match (&self.index, &self.paragraphs) {
            (Some(_), Some(_)) => meta.paragraphs.iter().map(|p| (p.number, p.key)).collect(),
            _ => Vec::new(),
        };
        Gathered { paragraphs, paragraph_chars: meta.paragraph_chars, ..Gathered::default() }
    }

    /// A paragraph left out of `doc` (kept): counted in its row and written to
    /// `paragraphs/`. Its verdict, when it has one, came first; without one it is alone in
    /// its cluster, and its row is made here.
    fn repeated(
        &mut self,
        doc: DocId,
        number: u32,
        r: RepeatedParagraph,
        emit: &mut dyn FnMut(Written),
    ) -> Result<(), SpillError> {
        self.make_row_of(doc, emit)?;
        let row = self.current.as_mut().expect("a kept document's row");
        let counts = row.repeated.as_mut().expect("paragraphs are left out of kept documents");
        counts.paragraphs += 1;
        counts.chars += u64::from(r.seen.chars);
        self.gathered.cuts.push((r.seen.offset, r.seen.len));
        self.gathered.left_out.push(number);
        self.sink
            .stats
            .borrow_mut()
            .paragraphs
            .note(u64::from(r.seen.chars), counts.paragraphs == 1);
        let paragraph = ParagraphRow {
            doc,
            id: r.seen.id,
            paragraph: number,
            offset: r.seen.offset,
            len: r.seen.len,
            chars: r.seen.chars,
            key: r.key,
            first_doc: r.first,
            first_id: r.first_id,
            first_run: r
                .first_generation
                .and_then(|g| self.index.as_ref().map(|index| index.plan.run_of(g).to_string())),
        };
        self.paragraphs.as_mut().expect("on").add(paragraph, &self.sink);
        Ok(())
    }

    /// Makes `doc`'s row the current one: its verdict, when it has one, came first; without
    /// one it is alone in its cluster, and its row is made here.
    fn make_row_of(&mut self, doc: DocId, emit: &mut dyn FnMut(Written)) -> Result<(), SpillError> {
        if self.current.as_ref().is_none_or(|row| row.doc != doc) {
            self.flush_singletons_before(DocId::from_raw(doc.get() + 1), emit)?;
        }
        let row = self.current.as_ref().expect("a kept document's row");
        assert_eq!(row.doc, doc, "a paragraph of a document with no row");
        Ok(())
    }

    /// Removes a kept document whose paragraphs left out are more than the share allowed
    /// of its characters (as paragraphs are compared), unless it holds a paragraph a later
    /// document left out, or is the kept document of a cluster (its members were removed
    /// as copies of it).
    fn mostly_repeated(&self, row: &mut DocumentRow, gathered: &Gathered) {
        let Some(repeated) = row.repeated.filter(|r| r.paragraphs > 0) else { return };
        let share = (repeated.chars as f64 / gathered.paragraph_chars.max(1) as f64).min(1.0);
        let stays = gathered.held_later || row.cluster_size.unwrap_or(1) > 1;
        if row.decision != Decision::Keep || stays || share <= self.max_repeated_share {
            return;
        }
        row.decision = Decision::Remove;
        row.reason = Some(Reason::MostlyRepeated);
        row.detail = Some(format!(
            "{:.0}% of its characters are in {} paragraph(s) other documents hold",
            share * 100.0,
            repeated.paragraphs
        ));
    }

    fn write_row(
        &mut self,
        mut row: DocumentRow,
        gathered: Gathered,
        emit: &mut dyn FnMut(Written),
    ) {
        self.mostly_repeated(&mut row, &gathered);
        if row.decision == Decision::Keep {
            let Gathered { cuts, left_out, paragraphs, .. } = gathered;
            for (number, key) in paragraphs {
                if left_out.binary_search(&number).is_err() {
                    let id = row.id.clone().unwrap_or_default();
                    emit(Written::Held(Keyed { key: (key, row.doc, number), value: id }));
                }
            }
            if self.emit_kept {
                // A web page's ranges are of its main text, not of a field of its record:
                // it is written as it would be without them.
                let web = row.web.as_deref().is_some_and(|w| w.url.is_some());
                emit(Written::Kept((row.doc, if web { Vec::new() } else { cuts })));
            }
        }
        self.sink.stats.borrow_mut().decisions.count_documents(std::slice::from_ref(&row));
        self.documents.add(row, &self.sink);
    }
}

impl Drain<Keyed<DocItemKey, DocItem>, Written> for Assemble {
    fn item(
        &mut self,
        item: Keyed<DocItemKey, DocItem>,
        emit: &mut dyn FnMut(Written),
    ) -> Result<(), SpillError> {
        let (doc, number) = item.key;
        let verdict = match item.value {
            DocItem::Verdict(v) => v,
            DocItem::Repeated(r) => return self.repeated(doc, number - 1, r, emit),
            DocItem::HeldLater => {
                self.make_row_of(doc, emit)?;
                self.gathered.held_later = true;
                return Ok(());
            }
        };
        let row = match verdict {
            Verdict::Rejected(r) => {
                self.flush_singletons_before(doc, emit)?;
                reject_row(r, &self.sources)
            }
            Verdict::DuplicateId { first } => {
                let meta = self.take_meta(doc, emit)?;
                let detail = format!(
                    "id first seen at \"{}\" record {}",
                    self.sources[first.file_index() as usize],
                    first.record()
                );
                reject_row(
                    RejectedRecord { doc, id: Some(meta.id), reason: Reason::DuplicateId, detail },
                    &self.sources,
                )
            }
            Verdict::Assigned(a) => {
                let meta = self.take_meta(doc, emit)?;
                self.index(doc, &meta, Some(&a))?;
                let gathered = self.gathered_of(&meta);
                let row = self.accepted_row(doc, meta, Some(a));
                self.push(row, gathered, emit);
                return Ok(());
            }
        };
        self.push(row, Gathered::default(), emit);
        Ok(())
    }

    fn end(&mut self, emit: &mut dyn FnMut(Written)) -> Result<(), SpillError> {
        self.flush_singletons_before(DocId::from_raw(u64::MAX), emit)?;
        if let Some(row) = self.current.take() {
            let gathered = std::mem::take(&mut self.gathered);
            self.write_row(row, gathered, emit);
        }
        // Every worker's part of `documents/` and `paragraphs/` is there, even empty.
        self.documents.finish(&self.sink, true);
        if let Some(paragraphs) = self.paragraphs.as_mut() {
            paragraphs.finish(&self.sink, true);
        }
        if let Some(index) = self.index.as_mut() {
            index.finish(&self.sink);
        }
        Ok(())
    }
}

impl<'s, T: Timestamp> WriteDocuments<'s, T> for StreamVec<'s, T, Keyed<DocItemKey, DocItem>> {
    fn write_documents(
        self,
        env: &OperatorEnv,
        sources: Arc<[Arc<str>]>,
        job: &JobConfig,
    ) -> StreamVec<'s, T, Written> {
        let (store, sink, spill) = (env.store.clone(), env.sink.clone(), env.spill.clone());
        let (emit_kept, removal) = (job.write_kept.is_some(), job.spec.decision.removal);
        let (index, paragraphs) = (job.index.clone(), job.spec.paragraphs.enabled);
        let max_repeated_share = job.spec.paragraphs.max_repeated_share;
        let by_doc = Exchange::new(|v: &Keyed<DocItemKey, DocItem>| route_doc(v.key.0));
        collect_sorted(self, by_doc, "WriteDocuments", spill, move || {
            let meta =
                store.borrow_mut().meta.take().expect("the store finished before the clusters");
            let index = match &index {
                Some(plan) => {
                    // The last reader: the file goes once this reader is done.
                    let file = store.borrow_mut().signatures.take().expect("the store finished");
                    Some(IndexDocs::new(plan.clone(), file.cursor()?))
                }
                None => None,
            };
            Ok(Assemble {
                index,
                meta: meta.iter()?,
                next_meta: None,
                current: None,
                gathered: Gathered::default(),
                documents: documents_part(paragraphs),
                paragraphs: paragraphs.then(paragraphs_part),
                max_repeated_share,
                sink: sink.clone(),
                sources: sources.clone(),
                emit_kept,
                removal,
            })
        })
    }
}

/// This worker's part of `documents/`, with the paragraph columns when `paragraphs`.
fn documents_part(paragraphs: bool) -> Batched<DocumentsWriter> {
    Batched::new(Box::new(move |sink: &PartSink| {
        let dir = sink.output.join("documents");
        DocumentsWriter::create_with(&dir, sink.part, &(sink.metadata)(), paragraphs)
    }))
}

/// This worker's part of `paragraphs/`: the paragraphs left out of its kept documents.
fn paragraphs_part() -> Batched<ParagraphsWriter> {
    Batched::new(Box::new(|sink: &PartSink| {
        ParagraphsWriter::create(&sink.output.join("paragraphs"), sink.part, &(sink.metadata)())
    }))
}

/// The `documents/` row of a rejected record.
pub fn reject_row(r: RejectedRecord, sources: &[Arc<str>]) -> DocumentRow {
    DocumentRow {
        doc: r.doc,
        id: r.id,
        source: sources[r.doc.file_index() as usize].clone(),
        decision: Decision::Reject,
        cluster: None,
        cluster_size: None,
        duplicate_of: None,
        duplicate_of_run: None,
        reason: Some(r.reason),
        detail: Some(r.detail),
        verified_with_kept: None,
        features: None,
        chars: None,
        web: None,
        repeated: None,
    }
}

#[cfg(test)]
mod tests {
    use neardup_core::ContentHash;

    use super::*;
    use crate::operators::testing::{drain, sink};
    use crate::reporting::stats::WorkerStats;
    use crate::storage::spill::SortedRuns;

    fn doc(record: u64) -> DocId {
        DocId::new(0, record)
    }

    fn meta(record: u64, text: &str, matched: bool) -> Keyed<DocId, DocMeta> {
        Keyed {
            key: doc(record),
            value: DocMeta {
                id: format!("d{record}"),
                chars: text.len() as u64,
                features: 10,
                content: ContentHash::of_text(text, 0),
                matched,
                representative: true,
                web: None,
                paragraphs: Vec::new(),
                paragraph_chars: 0,
            },
        }
    }

    fn assigned(kept: u64, kept_text: &str, verified: bool) -> Verdict {
        Verdict::Assigned(Assignment {
            kept: doc(kept),
            kept_id: format!("d{kept}"),
            kept_content: ContentHash::of_text(kept_text, 0),
            cluster_size: 3,
            radius: 1,
            verified_with_kept: verified,
            indexed: None,
        })
    }

    fn verdict(record: u64, v: Verdict) -> Keyed<DocId, Verdict> {
        Keyed { key: doc(record), value: v }
    }

    /// A written row: (record, decision, reason, duplicate_of).
    type Row = (u64, Decision, Option<Reason>, Option<String>);

    /// Runs the stage over `meta` and `verdicts`; returns the kept documents it emitted
    /// and the rows it wrote.
    fn assemble(
        removal: Removal,
        meta: Vec<Keyed<DocId, DocMeta>>,
        verdicts: Vec<Keyed<DocId, Verdict>>,
    ) -> (Vec<u64>, Vec<Row>, WorkerStats) {
        let dir = tempfile::tempdir().unwrap();
        let mut runs = SortedRuns::new(dir.path(), 0);
        for m in meta {
            runs.push(m).unwrap();
        }
        let file = runs.into_file().unwrap();
        let sink = sink(dir.path(), std::rc::Rc::default());
        let mut stage = Assemble {
            meta: file.iter().unwrap(),
            next_meta: None,
            current: None,
            gathered: Gathered::default(),
            documents: documents_part(false),
            paragraphs: None,
            max_repeated_share: 1.0,
            sink: sink.clone(),
            sources: vec![Arc::from("a.jsonl")].into(),
            emit_kept: true,
            removal,
            index: None,
        };
        let items = verdicts
            .into_iter()
            .map(|v| Keyed { key: (v.key, 0), value: DocItem::Verdict(v.value) });
        let kept = drain(&mut stage, items.collect())
            .into_iter()
            .filter_map(|w| match w {
                Written::Kept((d, _)) => Some(DocId::record(d)),
                Written::Held(_) => None,
            })
            .collect();
        assert!(sink.error.borrow().is_none());
        let rows = neardup_io::read_documents(&dir.path().join("documents"))
            .unwrap()
            .into_iter()
            .map(|r| (r.doc.record(), r.decision, r.reason, r.duplicate_of))
            .collect();
        let stats = sink.stats.borrow().clone();
        (kept, rows, stats)
    }

    #[test]
    fn every_record_gets_one_row_in_doc_order() {
        let reject = RejectedRecord {
            doc: doc(5),
            id: Some("d5".into()),
            reason: Reason::MalformedJson,
            detail: "expected value".into(),
        };
        let (kept, rows, stats) = assemble(
            Removal::Connected,
            vec![
                meta(1, "kept", true),
                meta(2, "near", true),
                meta(3, "copy", true),
                meta(4, "short", false),
                meta(6, "last", true),
            ],
            vec![
                verdict(5, Verdict::Rejected(reject)),
                verdict(2, assigned(1, "kept", false)),
                verdict(1, assigned(1, "kept", true)),
                verdict(3, Verdict::DuplicateId { first: doc(1) }),
            ],
        );
        let d1 = Some("d1".to_string());
        assert_eq!(
            rows,
            [
                (1, Decision::Keep, None, None),
                (2, Decision::Remove, Some(Reason::NearDuplicate), d1.clone()),
                (3, Decision::Reject, Some(Reason::DuplicateId), None),
                // In no pair: kept, and said to be too short to be matched.
                (4, Decision::Keep, Some(Reason::TooFewFeatures), None),
                (5, Decision::Reject, Some(Reason::MalformedJson), None),
                (6, Decision::Keep, None, None),
            ]
        );
        assert_eq!(kept, [1, 4, 6]);
        assert_eq!(
            (stats.decisions.clusters, stats.decisions.removed_not_verified_with_kept),
            (1, 1)
        );
        assert_eq!(stats.decisions.by_decision[&Decision::Keep], 3);
    }

    #[test]
    fn with_verified_removal_a_member_never_compared_with_the_kept_document_stays() {
        let (kept, rows, _) = assemble(
            Removal::Verified,
            vec![meta(1, "kept", true), meta(2, "kept", true), meta(3, "far", true)],
            vec![
                verdict(1, assigned(1, "kept", true)),
                verdict(2, assigned(1, "kept", true)),
                verdict(3, assigned(1, "kept", false)),
            ],
        );
        assert_eq!(
            rows,
            [
                (1, Decision::Keep, None, None),
                (2, Decision::Remove, Some(Reason::ExactDuplicate), Some("d1".into())),
                (3, Decision::Keep, Some(Reason::UnverifiedInCluster), None),
            ]
        );
        assert_eq!(kept, [1, 3]);
    }
}
