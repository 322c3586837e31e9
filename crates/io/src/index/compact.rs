//! `index compact`: merging every segment into one.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

use super::frequencies::{read_frequencies, write_frequencies};
use super::held_paragraphs::HeldParagraph;
use super::manifest::{Segment, folder_bytes, open_to_change, remove_orphans};
use super::parts::{
    DOC_PAGE_ROWS, DocPartWriter, IndexRef, IndexedDoc, KEY_ROW_GROUP_ROWS, KeyPartWriter, KeyRow,
    KeyTable, PartRows, doc_part_of, doc_part_path, doc_rows, table_part_path,
};
use super::templates::{HostSample, TemplatePage, TemplatePartWriter, TemplateRows};

/// Documents per docs part of a merged segment, at most: a lookup reads each part that
/// holds candidates on one worker, so a large segment needs enough parts to spread them.
pub(super) const MERGED_DOCS_PER_PART: u64 = 65_536;

/// What [`compact`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Compacted {
    /// Segments before (one per run since the last compaction, plus the last compacted one).
    pub segments_before: u64,
    /// Generations in the merged segment.
    pub generations: u64,
    /// Documents in the merged segment.
    pub documents: u64,
    /// Key rows before and after.
    pub keys_before: u64,
    /// Key rows after: those of forgotten documents are dropped.
    pub keys_after: u64,
    /// Bytes of the segments before and after.
    pub bytes_before: u64,
    /// Bytes of the merged segment.
    pub bytes_after: u64,
    /// Folders no committed generation refers to (left by failed runs or compactions),
    /// removed.
    pub orphans_removed: Vec<String>,
    /// The merged segment's folder; `None` when there was nothing to merge.
    pub folder: Option<String>,
    /// The lock of a run that had stopped, taken over, as a sentence.
    pub lock_taken_over: Option<String>,
}

/// Merges every segment of the index in `dir` into one, dropping the key rows of
/// forgotten documents, and removes folders no committed generation refers to. Holds the
/// index lock. The merged segment is written beside the old ones and committed by the
/// manifest; only then are the old folders removed, so a failure at any point leaves the
/// index as it was (plus a folder the next compaction removes).
///
/// Reading streams every part once; memory holds a batch of every part being merged and
/// a row group of every new docs part.
///
/// # Errors
/// [`Error::NoIndex`] when `dir` holds no index, [`Error::Busy`], or the errors of
/// reading and writing parts.
pub fn compact(dir: &Path) -> Result<Compacted> {
    let (mut manifest, mut lock) = open_to_change(dir)?;
    let segments = manifest.segments();
    let mut report = Compacted {
        segments_before: segments.len() as u64,
        generations: manifest.generations.len() as u64,
        documents: manifest.generations.iter().map(|g| g.documents).sum(),
        keys_before: manifest.generations.iter().map(|g| g.keys).sum(),
        lock_taken_over: lock.taken_over().map(ToString::to_string),
        ..Compacted::default()
    };
    report.orphans_removed = remove_orphans(dir, &segments, None)?;
    let forgotten: HashSet<IndexRef> = manifest
        .generations
        .iter()
        .flat_map(|g| g.forgotten.iter().map(|&doc| IndexRef { generation: g.number, doc }))
        .collect();
    if segments.len() <= 1 && forgotten.is_empty() {
        report.keys_after = report.keys_before;
        report.bytes_before = segments.iter().map(|s| folder_bytes(&dir.join(&s.folder))).sum();
        report.bytes_after = report.bytes_before;
        return Ok(report);
    }
    let (first, last) = (segments[0].first(), manifest.generations.last().expect("some").number);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let folder = format!("gen-{first:06}-{last:06}-c{nanos:x}");
    let out = dir.join(&folder);
    let dirs: Vec<PathBuf> = segments.iter().map(|s| dir.join(&s.folder)).collect();

    let (keys_of, keys_after) = merge_keys::<KeyRow>(&dirs, manifest.partitions, &forgotten, &out)?;
    let (held_of, _) = merge_keys::<HeldParagraph>(&dirs, manifest.partitions, &forgotten, &out)?;
    report.keys_after = keys_after;
    let doc_parts = merge_docs(&segments, &dirs, report.documents, &out)?;
    if let Some(sum) = read_frequencies(dirs.iter().map(PathBuf::as_path))? {
        write_frequencies(&out, &sum)?;
    }
    let template_parts = merge_templates(&manifest, &dirs, &forgotten, &out)?;

    for g in &mut manifest.generations {
        g.folder = folder.clone();
        g.doc_parts = doc_parts;
        g.template_parts = template_parts;
        g.keys = keys_of.get(&g.number).copied().unwrap_or(0);
        if let Some(held) = g.paragraphs.as_mut() {
            *held = held_of.get(&g.number).copied().unwrap_or(0);
        }
        g.forgotten.clear();
    }
    manifest.neardup_version = env!("CARGO_PKG_VERSION").to_string();
    lock.commit(&manifest)?; // the commit point
    report.bytes_before = dirs.iter().map(|d| folder_bytes(d)).sum();
    report.bytes_after = folder_bytes(&out);
    for d in &dirs {
        crate::destination::remove_all(d)
            .map_err(|source| Error::Write { path: d.clone(), source })?;
    }
    report.folder = Some(folder);
    Ok(report)
}

/// Merges the parts of key table `R` (bucket keys, or held paragraphs) of the segments in
/// `dirs` into `out`, partition by partition: a k-way merge in the rows' order (key, then
/// document) that drops the rows of `forgotten` documents. Returns the rows written per
/// generation and in all.
fn merge_keys<R: KeyTable>(
    dirs: &[PathBuf],
    partitions: u32,
    forgotten: &HashSet<IndexRef>,
    out: &Path,
) -> Result<(BTreeMap<u32, u64>, u64)> {
    let mut keys_of: BTreeMap<u32, u64> = BTreeMap::new();
    let mut rows_written = 0;
    for partition in 0..partitions {
        let mut readers = dirs
            .iter()
            .map(|d| {
                PartRows::open(&table_part_path::<R>(d, partition), KEY_ROW_GROUP_ROWS, R::decode)
            })
            .collect::<Result<Vec<_>>>()?;
        let mut heap = std::collections::BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some(row) = r.next()? {
                heap.push(std::cmp::Reverse((row, i)));
            }
        }
        // Made at the first row: a partition without rows has no part.
        let mut writer: Option<KeyPartWriter<R>> = None;
        let mut chunk = Vec::with_capacity(KEY_ROW_GROUP_ROWS);
        loop {
            let next = heap.pop();
            let end = next.is_none();
            if let Some(std::cmp::Reverse((row, i))) = next {
                if let Some(following) = readers[i].next()? {
                    heap.push(std::cmp::Reverse((following, i)));
                }
                if !forgotten.contains(&row.at()) {
                    *keys_of.entry(row.at().generation).or_default() += 1;
                    chunk.push(row);
                }
            }
            if chunk.len() == KEY_ROW_GROUP_ROWS || (end && !chunk.is_empty()) {
                if writer.is_none() {
                    writer = Some(KeyPartWriter::create(out, partition)?);
                }
                writer.as_mut().expect("made above").write(&chunk)?;
                chunk.clear();
            }
            if end {
                break;
            }
        }
        if let Some(w) = writer {
            rows_written += w.finish()?;
        }
    }
    Ok((keys_of, rows_written))
}

/// Pages per templates part of a merged segment, about: parts are cut between hosts.
const MERGED_PAGES_PER_PART: u64 = 65_536;

/// Merges the templates parts of every segment (in `dirs`) into `out`: a k-way merge in
/// (host, rank) order that keeps each host's sample ([`HostSample`]) and drops the rows of
/// `forgotten` documents, cut into parts between hosts. Returns the number of parts.
fn merge_templates(
    manifest: &super::Manifest,
    dirs: &[PathBuf],
    forgotten: &HashSet<IndexRef>,
    out: &Path,
) -> Result<u32> {
    let mut readers = Vec::new();
    for (segment, dir) in manifest.segments().iter().zip(dirs) {
        let parts = manifest.generation(segment.first()).map_or(0, |g| g.template_parts);
        for part in 0..parts {
            readers.push(TemplateRows::open(dir, part)?);
        }
    }
    let mut heap = std::collections::BinaryHeap::new();
    for (i, r) in readers.iter_mut().enumerate() {
        if let Some(row) = r.next_row()? {
            heap.push(std::cmp::Reverse((row, i)));
        }
    }
    let (mut parts, mut in_part) = (0u32, 0u64);
    let mut writer: Option<TemplatePartWriter> = None;
    let mut chunk: Vec<TemplatePage> = Vec::new();
    let mut sample = HostSample::default();
    let mut last_host = None;
    while let Some(std::cmp::Reverse((row, i))) = heap.pop() {
        if let Some(next) = readers[i].next_row()? {
            heap.push(std::cmp::Reverse((next, i)));
        }
        if forgotten.contains(&row.at()) || !sample.keeps(row.host, row.rank) {
            continue;
        }
        let new_host = last_host != Some(row.host);
        last_host = Some(row.host);
        if new_host && in_part >= MERGED_PAGES_PER_PART {
            let mut w = writer.take().expect("rows were written");
            w.write(&chunk)?;
            chunk.clear();
            w.finish()?;
            in_part = 0;
        }
        if writer.is_none() {
            writer = Some(TemplatePartWriter::create(out, parts)?);
            parts += 1;
        }
        chunk.push(row);
        in_part += 1;
        if chunk.len() >= 4096 && new_host {
            writer.as_mut().expect("made above").write(&chunk)?;
            chunk.clear();
        }
    }
    if let Some(mut w) = writer {
        w.write(&chunk)?;
        w.finish()?;
    }
    Ok(parts)
}

/// Merges the docs parts of `segments` (in `dirs`, holding `documents` in all) into `out`:
/// each new part takes its rows of every segment in (generation, `doc_id`) order, and a
/// segment written with another number of parts is split anew. Returns the number of parts.
fn merge_docs(segments: &[Segment], dirs: &[PathBuf], documents: u64, out: &Path) -> Result<u32> {
    // As many parts as the most of any segment, and more when there are more than
    // MERGED_DOCS_PER_PART documents a part.
    let by_size = u32::try_from(documents.div_ceil(MERGED_DOCS_PER_PART)).unwrap_or(1024);
    let doc_parts = segments.iter().map(|s| s.doc_parts).max().unwrap_or(1).max(by_size).min(1024);
    // Every new part is open at once; each segment's parts are merged in (generation,
    // doc_id) order and each row goes to its new part, so every part is read once.
    let mut writers: Vec<(DocPartWriter, Vec<IndexedDoc>, u64)> = (0..doc_parts)
        .map(|part| DocPartWriter::create(out, part).map(|w| (w, Vec::new(), 0)))
        .collect::<Result<_>>()?;
    for (segment, segment_dir) in segments.iter().zip(dirs) {
        let mut readers = (0..segment.doc_parts)
            .map(|part| {
                PartRows::open(&doc_part_path(segment_dir, part), DOC_PAGE_ROWS * 16, doc_rows)
            })
            .collect::<Result<Vec<_>>>()?;
        let mut heap = std::collections::BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some(row) = r.next()? {
                heap.push(std::cmp::Reverse((row.at(), i, row)));
            }
        }
        while let Some(std::cmp::Reverse((_, i, row))) = heap.pop() {
            if let Some(next) = readers[i].next()? {
                heap.push(std::cmp::Reverse((next.at(), i, next)));
            }
            let (writer, buffer, rows) = &mut writers[doc_part_of(row.doc, doc_parts) as usize];
            buffer.push(row);
            *rows += 1;
            if buffer.len() == DOC_PAGE_ROWS * 16 {
                writer.write(buffer)?;
                buffer.clear();
            }
        }
    }
    for (mut writer, buffer, rows) in writers {
        writer.write(&buffer)?;
        if rows > 0 {
            writer.finish()?;
        }
    }
    Ok(doc_parts)
}
