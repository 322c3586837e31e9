//! `index forget`: taking documents out of the index.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::Result;

use super::manifest::open_to_change;
use super::parts::{DocPartWriter, for_each_docs_batch};

/// What [`forget`] took out of an index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Forgotten {
    /// Documents whose id was listed.
    pub listed: u64,
    /// Documents taken out because the kept document of their cluster was listed.
    pub with_their_kept: u64,
    /// Listed ids found nowhere in the index.
    pub unknown_ids: u64,
    /// The lock of a run that had stopped, taken over, as a sentence.
    pub lock_taken_over: Option<String>,
}

/// Takes the documents with the given ids out of the index in `dir`, so they no longer
/// match new copies; when a listed document was the kept one of its cluster, the cluster's
/// other (removed) members go too, as nothing kept stands for them any more. Holds the
/// index lock. Docs parts are rewritten atomically, one at a time, then the manifest's
/// document counts and lists of forgotten documents are updated; key rows of forgotten
/// documents stay until [`compact`](fn@super::compact) and match nothing.
///
/// # Errors
/// [`Error::NoIndex`](crate::Error::NoIndex) when `dir` holds no index, [`Error::Busy`](crate::Error::Busy), or the errors of
/// reading and writing parts.
pub fn forget(dir: &Path, ids: &std::collections::BTreeSet<String>) -> Result<Forgotten> {
    let (mut manifest, mut lock) = open_to_change(dir)?;
    let segments = manifest.segments();
    // First pass: the documents listed, wherever they are.
    // Parts holding a listed id or a row whose kept document has a listed id are marked
    // (an id may repeat across runs, so the second pass checks the kept document itself).
    let mut listed = std::collections::BTreeSet::new();
    let mut seen_ids = std::collections::BTreeSet::new();
    let mut marked = std::collections::BTreeSet::new();
    for (s, segment) in segments.iter().enumerate() {
        let segment_dir = dir.join(&segment.folder);
        for part in 0..segment.doc_parts {
            for_each_docs_batch(&segment_dir, part, |rows| {
                for row in rows {
                    if ids.contains(&row.id) {
                        seen_ids.insert(row.id.clone());
                        listed.insert(row.at());
                        marked.insert((s, part));
                    } else if ids.contains(&row.kept_id) {
                        marked.insert((s, part));
                    }
                }
                Ok(())
            })?;
        }
    }
    let mut report = Forgotten {
        unknown_ids: (ids.len() - seen_ids.len()) as u64,
        lock_taken_over: lock.taken_over().map(ToString::to_string),
        ..Forgotten::default()
    };
    if listed.is_empty() {
        return Ok(report);
    }
    // Second pass: rewrite the parts that hold a listed document or a member of a listed
    // kept document's cluster. A part is streamed into a new file, which replaces the old
    // one only when a row was left out (an unfinished writer leaves nothing behind).
    let mut gone: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for (s, part) in marked {
        let segment_dir = dir.join(&segments[s].folder);
        let mut writer = DocPartWriter::create(&segment_dir, part)?;
        let mut removed = 0u64;
        for_each_docs_batch(&segment_dir, part, |rows| {
            let mut kept_rows = Vec::with_capacity(rows.len());
            for row in rows {
                let me = row.at();
                if listed.contains(&me) {
                    report.listed += 1;
                } else if listed.contains(&row.kept) {
                    report.with_their_kept += 1;
                } else {
                    kept_rows.push(row);
                    continue;
                }
                removed += 1;
                gone.entry(me.generation).or_default().push(me.doc);
            }
            writer.write(&kept_rows)
        })?;
        if removed > 0 {
            writer.finish()?;
        }
    }
    for g in &mut manifest.generations {
        if let Some(docs) = gone.remove(&g.number) {
            g.documents -= docs.len() as u64;
            g.forgotten.extend(docs);
            g.forgotten.sort_unstable();
            g.forgotten.dedup();
        }
    }
    lock.commit(&manifest)?;
    Ok(report)
}
