//! Tests of the index: formats, lookups, forget and compact.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::Result;

use super::compact::compact;
use super::forget::{Forgotten, forget};
use super::lookup::{ProbeStats, fetch_docs, probe_keys};
use super::manifest::{
    DEFAULT_PARTITIONS, Generation, IndexLock, MANIFEST, Manifest, generation_folder,
};
use super::parts::{
    DOC_ROW_GROUP_ROWS, DocPartWriter, IndexRef, IndexedDoc, KEY_PAGE_ROWS, KEY_ROW_GROUP_ROWS,
    KeyPartWriter, KeyRow, doc_part_of, for_each_docs_batch, partition_of,
};
use super::templates::{TEMPLATE_PAGES_PER_HOST, TemplatePage, TemplatePartWriter, TemplateRows};

/// A fixed pseudo-random sequence (splitmix64), so the tests need no seed handling.
fn keys(seed: u64, n: usize) -> Vec<u64> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

#[test]
fn partitions_are_contiguous_key_ranges() {
    assert_eq!(partition_of(0, 64), 0);
    assert_eq!(partition_of(u64::MAX, 64), 63);
    assert_eq!(partition_of(1 << 63, 2), 1);
    assert_eq!(partition_of((1 << 63) - 1, 2), 0);
    let mut sorted = keys(1, 1000);
    sorted.sort_unstable();
    let parts: Vec<u32> = sorted.iter().map(|&k| partition_of(k, 64)).collect();
    assert!(parts.windows(2).all(|w| w[0] <= w[1]));
}

/// Writes `rows` of one partition (each with a bucket of one to three documents) and
/// probes them: every probe finds exactly the rows a scan finds, in both halves of the
/// key space (stored as negative and non-negative i64).
#[test]
fn probing_finds_exactly_the_rows_of_the_probed_keys() {
    let dir = tempfile::tempdir().unwrap();
    for partition in 0..2u32 {
        let gen_dir = dir.path().join(format!("g{partition}"));
        let mut rows: Vec<KeyRow> = keys(u64::from(partition) + 7, 40_000)
            .into_iter()
            .filter(|&k| partition_of(k, 2) == partition)
            .enumerate()
            .flat_map(|(i, key)| {
                (0..=(i % 3) as u64).map(move |d| KeyRow {
                    key,
                    generation: 1 + (d % 2) as u32,
                    doc: i as u64 * 10 + d,
                })
            })
            .collect();
        rows.sort_unstable();
        let mut w = KeyPartWriter::create(&gen_dir, partition).unwrap();
        for chunk in rows.chunks(5000) {
            w.write(chunk).unwrap();
        }
        assert_eq!(w.finish().unwrap(), rows.len() as u64);

        // Present keys: every fiftieth; absent: keys of the same partition never written.
        let mut probe: Vec<u64> = rows.iter().step_by(50).map(|r| r.key).collect();
        let absent: Vec<u64> = keys(99, 2000)
            .into_iter()
            .filter(|&k| partition_of(k, 2) == partition)
            .filter(|k| rows.binary_search_by_key(k, |r| r.key).is_err())
            .take(300)
            .collect();
        probe.extend(&absent);
        probe.sort_unstable();
        probe.dedup();
        let mut stats = ProbeStats::default();
        let found = probe_keys(&gen_dir, partition, &probe, &mut stats).unwrap();
        let expected: Vec<KeyRow> =
            rows.iter().filter(|r| probe.binary_search(&r.key).is_ok()).copied().collect();
        assert_eq!(found, expected);
        assert_eq!(stats.parts, 1);

        // One key: its page (or two, when its rows cross a page end), not its row group.
        let mut stats = ProbeStats::default();
        let one = rows[rows.len() / 2].key;
        let found = probe_keys(&gen_dir, partition, &[one], &mut stats).unwrap();
        assert!(!found.is_empty() && found.iter().all(|r| r.key == one));
        assert!(stats.rows_read <= 2 * KEY_PAGE_ROWS as u64 + 16, "{stats:?}");

        // Absent keys alone: bloom filters leave almost every row group unread.
        let mut stats = ProbeStats::default();
        let mut only_absent = absent.clone();
        only_absent.sort_unstable();
        assert!(probe_keys(&gen_dir, partition, &only_absent, &mut stats).unwrap().is_empty());
        let groups = rows.len().div_ceil(KEY_ROW_GROUP_ROWS) as u64;
        assert!(stats.bloom_filters >= groups.min(2), "{stats:?}");
        assert!(stats.row_groups_read <= 1, "absent keys read {stats:?}");
    }
    // A partition without a part has no rows.
    let mut stats = ProbeStats::default();
    assert!(probe_keys(dir.path(), 5, &[1, 2], &mut stats).unwrap().is_empty());
}

fn doc(generation: u32, d: u64) -> IndexedDoc {
    IndexedDoc {
        generation,
        doc: d,
        id: format!("doc-{generation}-{d}"),
        source: "a.jsonl".into(),
        kept: IndexRef { generation, doc: d - d % 7 },
        kept_id: format!("doc-{generation}-{}", d - d % 7),
        kept_content: u128::from(d - d % 7),
        content: u128::from(d) << 64 | u128::from(d * 3),
        signature: (d as u32..d as u32 + 32).flat_map(u32::to_le_bytes).collect(),
        features: d as u32 * 5,
    }
}

/// Every row of docs part `part` of the segment in `segment_dir`.
fn read_docs_part(segment_dir: &Path, part: u32) -> Result<Vec<IndexedDoc>> {
    let mut rows = Vec::new();
    for_each_docs_batch(segment_dir, part, |batch| {
        rows.extend(batch);
        Ok(())
    })?;
    Ok(rows)
}

fn at(generation: u32, doc: u64) -> IndexRef {
    IndexRef { generation, doc }
}

/// A part holding two generations with the same doc_ids: fetching finds exactly the
/// wanted (generation, doc_id) pairs, reading one row group for one document.
#[test]
fn fetching_reads_the_wanted_documents_only() {
    let dir = tempfile::tempdir().unwrap();
    let all: Vec<u64> = (1..30_000u64).map(|i| i * 3).collect();
    let mut w = DocPartWriter::create(dir.path(), 0).unwrap();
    for g in [1, 2] {
        for chunk in all.chunks(4096) {
            w.write(&chunk.iter().map(|&d| doc(g, d)).collect::<Vec<_>>()).unwrap();
        }
    }
    w.finish().unwrap();

    // Some present in either generation, some between present ones, some beyond the
    // end, and a generation that is not there.
    let mut wanted: Vec<IndexRef> = all.iter().step_by(997).map(|&d| at(1, d)).collect();
    wanted.extend(all.iter().skip(5).step_by(1999).map(|&d| at(2, d)));
    wanted.extend([at(1, 4), at(2, 5), at(2, 1_000_000), at(3, 3)]);
    wanted.sort_unstable();
    let mut stats = ProbeStats::default();
    let found = fetch_docs(dir.path(), 0, &wanted, &mut stats).unwrap();
    let expected: Vec<IndexedDoc> = wanted
        .iter()
        .filter(|r| r.doc % 3 == 0 && r.doc < 90_000 && r.generation <= 2)
        .map(|r| doc(r.generation, r.doc))
        .collect();
    assert_eq!(found, expected);

    // One document: one row group's ids are read, not the part (a row group holds one
    // generation).
    for g in [1, 2] {
        let mut stats = ProbeStats::default();
        let one = fetch_docs(dir.path(), 0, &[at(g, all[12_345])], &mut stats).unwrap();
        assert_eq!(one, vec![doc(g, all[12_345])]);
        assert_eq!(stats.row_groups_read, 1);
        assert!(stats.rows_read <= DOC_ROW_GROUP_ROWS as u64, "{stats:?}");
    }
    assert!(fetch_docs(dir.path(), 3, &[at(1, 3)], &mut stats).unwrap().is_empty());
}

/// Writes a segment of the given generations' documents (split into `parts` docs parts)
/// and of a key row per document and key in `keys_per_doc`; returns its generations.
fn write_segment(
    index: &Path,
    folder: &str,
    docs: &[IndexedDoc],
    keys_per_doc: u64,
    parts: u32,
) -> Vec<Generation> {
    let segment_dir = index.join(folder);
    for part in 0..parts {
        let mut mine: Vec<IndexedDoc> =
            docs.iter().filter(|d| doc_part_of(d.doc, parts) == part).cloned().collect();
        mine.sort_unstable();
        let mut w = DocPartWriter::create(&segment_dir, part).unwrap();
        w.write(&mine).unwrap();
        w.finish().unwrap();
    }
    let mut rows: Vec<KeyRow> = docs
        .iter()
        .flat_map(|d| {
            (0..keys_per_doc).map(|k| KeyRow {
                key: key_of(d.doc, k),
                generation: d.generation,
                doc: d.doc,
            })
        })
        .collect();
    rows.sort_unstable();
    for partition in 0..DEFAULT_PARTITIONS {
        let mine: Vec<KeyRow> = rows
            .iter()
            .filter(|r| partition_of(r.key, DEFAULT_PARTITIONS) == partition)
            .copied()
            .collect();
        if !mine.is_empty() {
            let mut w = KeyPartWriter::create(&segment_dir, partition).unwrap();
            w.write(&mine).unwrap();
            w.finish().unwrap();
        }
    }
    let mut numbers: Vec<u32> = docs.iter().map(|d| d.generation).collect();
    numbers.dedup();
    numbers
        .into_iter()
        .map(|number| {
            let documents = docs.iter().filter(|d| d.generation == number).count() as u64;
            Generation {
                number,
                folder: folder.to_string(),
                run: format!("run-{number}"),
                output: String::new(),
                created_unix: 0,
                documents,
                keys: documents * keys_per_doc,
                doc_parts: parts,
                template_parts: 0,
                paragraphs: None,
                paragraph_min_chars: None,
                forgotten: Vec::new(),
            }
        })
        .collect()
}

/// Key `k` of document `d`: documents 7j..7j+6 share their first key (a bucket).
fn key_of(d: u64, k: u64) -> u64 {
    if k == 0 { keys(d / 7, 1)[0] } else { keys(d * 31 + k, 1)[0] }
}

/// Every key row of an index, by probing every key of `docs`.
fn probe_all(index: &Path, docs: &[IndexedDoc], keys_per_doc: u64) -> Vec<KeyRow> {
    let manifest = Manifest::load(index).unwrap().unwrap();
    let mut probes: Vec<u64> =
        docs.iter().flat_map(|d| (0..keys_per_doc).map(|k| key_of(d.doc, k))).collect();
    probes.sort_unstable();
    probes.dedup();
    let mut found = Vec::new();
    for segment in manifest.segments() {
        for partition in 0..manifest.partitions {
            let mine: Vec<u64> = probes
                .iter()
                .copied()
                .filter(|&k| partition_of(k, manifest.partitions) == partition)
                .collect();
            let mut stats = ProbeStats::default();
            found.extend(
                probe_keys(&index.join(&segment.folder), partition, &mine, &mut stats).unwrap(),
            );
        }
    }
    found.sort_unstable();
    found
}

/// Every document of an index, by generation and doc_id.
fn all_docs(index: &Path) -> Vec<IndexedDoc> {
    let manifest = Manifest::load(index).unwrap().unwrap();
    let mut docs = Vec::new();
    for segment in manifest.segments() {
        for part in 0..segment.doc_parts {
            docs.extend(read_docs_part(&index.join(&segment.folder), part).unwrap());
        }
    }
    docs.sort_unstable();
    docs
}

#[test]
fn forgetting_a_kept_document_takes_its_cluster_out() {
    let dir = tempfile::tempdir().unwrap();
    let folder = generation_folder(1, "t");
    // Clusters of seven: doc 7k is kept, 7k+1..7k+6 point to it.
    let rows: Vec<IndexedDoc> = (7..70u64).map(|d| doc(1, d)).collect();
    let mut m = Manifest::new(BTreeMap::new());
    m.generations = write_segment(dir.path(), &folder, &rows, 2, 2);
    m.save(dir.path()).unwrap();

    // doc 14 is kept (its cluster: 14..=20); doc 30 is a removed member; one id is unknown.
    let ids = ["doc-1-14", "doc-1-30", "nowhere"].map(String::from).into_iter().collect();
    let report = forget(dir.path(), &ids).unwrap();
    assert_eq!(
        report,
        Forgotten { listed: 2, with_their_kept: 6, unknown_ids: 1, lock_taken_over: None }
    );
    let left: Vec<u64> = all_docs(dir.path()).iter().map(|d| d.doc).collect();
    let expected: Vec<u64> = (7..70u64).filter(|d| !(14..=20).contains(d) && *d != 30).collect();
    assert_eq!(left, expected);
    let m = Manifest::load(dir.path()).unwrap().unwrap();
    assert_eq!(m.generations[0].documents, expected.len() as u64);
    let gone: Vec<u64> = (14..=20).chain([30]).collect();
    assert_eq!(m.generations[0].forgotten, gone);
    // Fetching a forgotten document finds nothing.
    let mut stats = ProbeStats::default();
    for part in 0..2 {
        let wanted = [at(1, 14), at(1, 30)];
        let found = fetch_docs(&dir.path().join(&folder), part, &wanted, &mut stats).unwrap();
        assert!(found.is_empty());
    }
    assert!(!dir.path().join(".lock").exists());
}

/// Three segments (one already merged, written with other docs part counts), some
/// documents forgotten, and a folder a failed run left: compaction gives one segment
/// with every document and every key row but those of forgotten documents.
#[test]
fn compaction_merges_segments_and_drops_what_was_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path();
    let gen_docs = |g: u32, n: u64| (0..n).map(move |d| doc(g, d)).collect::<Vec<_>>();
    let merged: Vec<IndexedDoc> = gen_docs(1, 300).into_iter().chain(gen_docs(2, 200)).collect();
    let mut m = Manifest::new(BTreeMap::new());
    m.generations = write_segment(index, "gen-000001-000002-cx", &merged, 3, 2);
    m.generations.extend(write_segment(index, "gen-000003-a", &gen_docs(3, 250), 3, 3));
    m.generations.extend(write_segment(index, "gen-000004-b", &gen_docs(4, 120), 3, 2));
    // Pages kept for template learning: host 1 at ranks 0..80 in generation 3 (its doc 70
    // to 76 are forgotten below) and 40..120 in generation 4, host 2 in generation 4.
    let page = |host: u64, rank: u64, generation: u32, doc: u64| TemplatePage {
        host,
        rank,
        generation,
        doc,
        url: format!("https://h{host}/{rank}"),
        lines: vec![(rank, 20)],
    };
    let third: Vec<_> = (0..80).map(|r| page(1, r, 3, r)).collect();
    let fourth: Vec<_> = (40..120)
        .map(|r| page(1, r, 4, 1000 + r))
        .chain((0..3).map(|r| page(2, r, 4, r)))
        .collect();
    for (folder, rows, number) in [("gen-000003-a", &third, 3), ("gen-000004-b", &fourth, 4)] {
        let mut w = TemplatePartWriter::create(&index.join(folder), 1).unwrap();
        w.write(rows).unwrap();
        w.finish().unwrap();
        m.generations.iter_mut().find(|g| g.number == number).unwrap().template_parts = 2;
    }
    m.save(index).unwrap();
    write_segment(index, "gen-000005-failed", &gen_docs(5, 10), 3, 1);
    let everything: Vec<IndexedDoc> = all_docs(index);
    assert_eq!(everything.len(), 870);
    let keys_before = probe_all(index, &everything, 3);
    assert_eq!(keys_before.len(), 870 * 3);

    // Generation 3's doc 70 is kept with 71..=76 in its cluster; generation 1's doc 5
    // is a removed member.
    let ids = ["doc-3-70", "doc-1-5"].map(String::from).into_iter().collect();
    assert_eq!(forget(index, &ids).unwrap().listed, 2);
    let live: Vec<IndexedDoc> = all_docs(index);
    assert_eq!(live.len(), 870 - 8);
    let keys_live = probe_all(index, &everything, 3);
    assert_eq!(keys_live, keys_before, "forgetting leaves the key rows");

    let report = compact(index).unwrap();
    assert_eq!(report.segments_before, 3);
    assert_eq!(report.generations, 4);
    assert_eq!(report.documents, 862);
    assert_eq!((report.keys_before, report.keys_after), (870 * 3, 862 * 3));
    assert_eq!(report.orphans_removed, vec!["gen-000005-failed".to_string()]);
    let folder = report.folder.clone().unwrap();
    assert!(folder.starts_with("gen-000001-000004-c"), "{folder}");
    let mut folders: Vec<String> = std::fs::read_dir(index)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    assert_eq!(folders, vec![folder.clone()], "old and orphan folders are gone");

    let m = Manifest::load(index).unwrap().unwrap();
    let segments = m.segments();
    assert_eq!(segments.len(), 1);
    assert_eq!((segments[0].generations.clone(), segments[0].doc_parts), (vec![1, 2, 3, 4], 3));
    assert!(m.generations.iter().all(|g| g.forgotten.is_empty()));
    let keys: Vec<u64> = m.generations.iter().map(|g| g.keys).collect();
    assert_eq!(keys, vec![299 * 3, 200 * 3, 243 * 3, 120 * 3]);
    assert_eq!(all_docs(index), live);
    let forgotten = |r: &KeyRow| {
        (r.generation == 3 && (70..=76).contains(&r.doc)) || (r.generation == 1 && r.doc == 5)
    };
    let expected: Vec<KeyRow> = keys_before.iter().filter(|r| !forgotten(r)).copied().collect();
    assert_eq!(probe_all(index, &everything, 3), expected);
    // Every live document is fetched from its part of the merged segment.
    let mut stats = ProbeStats::default();
    for part in 0..3 {
        let wanted: Vec<IndexRef> =
            live.iter().filter(|d| doc_part_of(d.doc, 3) == part).map(IndexedDoc::at).collect();
        let found = fetch_docs(&index.join(&folder), part, &wanted, &mut stats).unwrap();
        assert_eq!(found.len(), wanted.len());
    }

    // Each host's sample: the least distinct ranks, a rank's earliest row, forgotten
    // documents left out.
    let mut sampled = Vec::new();
    for part in 0..m.generations[0].template_parts {
        let mut rows = TemplateRows::open(&index.join(&folder), part).unwrap();
        while let Some(row) = rows.next_row().unwrap() {
            sampled.push(row);
        }
    }
    let expected: Vec<_> = (0..TEMPLATE_PAGES_PER_HOST as u64)
        .map(|r| page(1, r, 3, r))
        .chain((0..3).map(|r| page(2, r, 4, r)))
        .collect();
    assert_eq!(sampled, expected);
    let mut forgotten_kept = third.clone();
    forgotten_kept.retain(|p| !(70..=76).contains(&p.doc));
    assert!(sampled.iter().all(|p| p.generation == 4 || forgotten_kept.contains(p)));

    // Nothing left to merge: the index stays as it is.
    let again = compact(index).unwrap();
    assert_eq!((again.segments_before, again.folder), (1, None));
    assert_eq!(Manifest::load(index).unwrap().unwrap(), m);
    assert!(!index.join(".lock").exists());
}

#[test]
fn one_run_at_a_time_holds_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let read = Manifest::new(BTreeMap::new());
    let lock = IndexLock::acquire(&index, &read.generations).unwrap();
    let e = IndexLock::acquire(&index, &read.generations).unwrap_err().to_string();
    assert!(e.contains("held by another run") && e.contains(".lock"), "{e}");
    drop(lock);
    // A run that read the index before another added to it must not commit over it.
    let mut newer = read.clone();
    newer.generations.push(Generation {
        number: 1,
        folder: generation_folder(1, "x"),
        run: "other".into(),
        output: String::new(),
        created_unix: 0,
        documents: 0,
        keys: 0,
        doc_parts: 1,
        template_parts: 0,
        paragraphs: None,
        paragraph_min_chars: None,
        forgotten: Vec::new(),
    });
    newer.save(&index).unwrap();
    let e = IndexLock::acquire(&index, &read.generations).unwrap_err().to_string();
    assert!(e.contains("changed after this run read it"), "{e}");
    assert!(!index.join(".lock").exists(), "a refused run leaves no lock");
    IndexLock::acquire(&index, &newer.generations).unwrap();
}

#[test]
fn manifests_round_trip_and_name_the_setting_that_differs() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(Manifest::load(&dir.path().join("none")).unwrap(), None);
    let settings: BTreeMap<String, String> =
        [("method", "minhash"), ("minhash.bands", "16"), ("signature_version", "2")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    let mut m = Manifest::new(settings.clone());
    assert_eq!(m.next_generation(), 1);
    m.generations.push(Generation {
        number: 1,
        folder: generation_folder(1, "abc"),
        run: "week-1".into(),
        output: "/runs/week-1".into(),
        created_unix: 1,
        documents: 10,
        keys: 170,
        doc_parts: 2,
        template_parts: 0,
        paragraphs: None,
        paragraph_min_chars: None,
        forgotten: Vec::new(),
    });
    m.save(dir.path()).unwrap();
    let loaded = Manifest::load(dir.path()).unwrap().unwrap();
    assert_eq!(loaded, m);
    assert_eq!(loaded.next_generation(), 2);
    loaded.check(dir.path(), &settings).unwrap();

    let mut other = settings.clone();
    other.insert("minhash.bands".into(), "21".into());
    let e = loaded.check(dir.path(), &other).unwrap_err().to_string();
    assert!(e.contains("minhash.bands = 16") && e.contains("minhash.bands = 21"), "{e}");
    assert!(e.contains("use the settings of the index (--set minhash.bands=16)"), "{e}");
    assert!(!e.contains("  "), "{e}");
    // No setting gives back another signature version's signatures: the index is built
    // again.
    let mut newer = other.clone();
    newer.insert("signature_version".into(), "3".into());
    let e = loaded.check(dir.path(), &newer).unwrap_err().to_string();
    assert!(e.starts_with(&format!("the index \"{}\"", dir.path().display())), "{e}");
    assert!(
        e.contains("built with signature_version = 2, this run has signature_version = 3"),
        "{e}"
    );
    assert!(e.contains("(these differ too: minhash.bands)"), "{e}");
    assert!(e.contains("running the index's batches again into another index folder"), "{e}");
    assert!(!e.contains("  "), "one space between words: {e}");
    assert!(!e.contains("use the settings of the index"), "{e}");
    other.remove("minhash.bands");
    let e = loaded.check(dir.path(), &other).unwrap_err().to_string();
    assert!(e.contains("(not set)"), "{e}");

    // Indexes of the formats before are read as this one, without template statistics
    // (format 3) or paragraphs (formats 3 and 4); a later one is refused, saying which
    // formats this neardup reads.
    let mut json: serde_json::Value = serde_json::to_value(&m).unwrap();
    assert!(m.generations[0].paragraphs.is_none());
    json["format"] = 4.into();
    std::fs::write(dir.path().join(MANIFEST), json.to_string()).unwrap();
    assert_eq!(Manifest::load(dir.path()).unwrap().unwrap(), m);
    json["format"] = 3.into();
    json["generations"][0].as_object_mut().unwrap().remove("template_parts");
    std::fs::write(dir.path().join(MANIFEST), json.to_string()).unwrap();
    assert_eq!(Manifest::load(dir.path()).unwrap().unwrap(), m);
    json["format"] = 6.into();
    std::fs::write(dir.path().join(MANIFEST), json.to_string()).unwrap();
    let e = Manifest::load(dir.path()).unwrap_err().to_string();
    assert!(e.contains("index format 6") && e.contains("formats 3 to 5"), "{e}");

    std::fs::write(dir.path().join(MANIFEST), "{\"format\": 99}").unwrap();
    let e = Manifest::load(dir.path()).unwrap_err().to_string();
    assert!(e.contains("index.json"), "{e}");
}
