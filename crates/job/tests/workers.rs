//! The same input gives the same pairs, clusters and decisions with 1, 2 and 8 workers, and
//! they equal a sequential brute-force reference that compares every pair of documents.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use neardup_core::{BlockLayout, BucketKey, CountMinSketch, DocId, Signature};
use neardup_io::{
    Decision, DocumentRow, PairKind, PairRow, Reason, Record, RecordReader, RejectedRecord,
    read_documents, read_pairs,
};
use neardup_job::{
    IdfWeights, JobConfig, JobSpec, KeepRule, Method, MethodParams, SignScratch, SignedDoc, Signer,
    Topology, run,
};
use neardup_testkit::{CorpusSpec, UnionFind, generate, write_jsonl};
use neardup_text::Segmenter;

/// A pair as compared: ids, kind and the similarity's bits (exact equality is intended).
type PairKey = (String, String, PairKind, u64);
/// A document as compared: everything that depends on the dataflow.
type DocKey = (
    Option<String>,
    Decision,
    Option<String>,
    Option<u64>,
    Option<String>,
    Option<Reason>,
    Option<bool>,
);

/// Writes the corpus as `files` JSONL files, so DocIds carry a file index and files are
/// split over workers.
fn corpus(dir: &Path, spec: &CorpusSpec, files: usize) -> Vec<PathBuf> {
    let records = generate(spec);
    let per_file = records.len().div_ceil(files);
    records
        .chunks(per_file)
        .enumerate()
        .map(|(i, chunk)| {
            let path = dir.join(format!("part-{i:03}.jsonl"));
            write_jsonl(&path, chunk);
            path
        })
        .collect()
}

fn run_job(
    spec: &JobSpec,
    inputs: &[PathBuf],
    out: PathBuf,
    workers: usize,
) -> (BTreeSet<PairKey>, BTreeMap<DocId, DocKey>) {
    run_on(spec, inputs, out, &Topology::local(workers)).0
}

fn run_on(
    spec: &JobSpec,
    inputs: &[PathBuf],
    out: PathBuf,
    topology: &Topology,
) -> ((BTreeSet<PairKey>, BTreeMap<DocId, DocKey>), neardup_job::Summary) {
    let config = JobConfig::new(spec.clone(), inputs, out.clone()).unwrap();
    let summary = run(&config, topology).unwrap();
    assert!(out.join("_SUCCESS").exists());
    let pairs = read_pairs(&out.join("pairs")).unwrap();
    let docs = read_documents(&out.join("documents")).unwrap();
    assert_eq!(docs.len() as u64, summary.counts.records, "every record is in documents/ once");
    assert_eq!(
        summary.counts.kept + summary.counts.removed + summary.counts.rejected,
        summary.counts.records
    );
    assert_eq!(pairs.len() as u64, summary.counts.pairs);
    let doc_map: BTreeMap<DocId, DocKey> = docs.iter().map(|d| (d.doc, doc_key(d))).collect();
    assert_eq!(doc_map.len(), docs.len(), "no document twice");
    let pair_set: BTreeSet<PairKey> = pairs.iter().map(pair_key).collect();
    assert_eq!(pair_set.len(), pairs.len(), "no pair twice, even when it shares several buckets");
    ((pair_set, doc_map), summary)
}

fn pair_key(p: &PairRow) -> PairKey {
    assert!(p.id_a < p.id_b, "pairs are ordered by id");
    (p.id_a.clone(), p.id_b.clone(), p.kind, p.similarity.to_bits())
}

fn doc_key(d: &DocumentRow) -> DocKey {
    (
        d.id.clone(),
        d.decision,
        d.cluster.clone(),
        d.cluster_size,
        d.duplicate_of.clone(),
        d.reason,
        d.verified_with_kept,
    )
}

/// The sequential reference: sign every document, find exact groups, compare every pair of
/// representatives that shares a bucket key, and cluster with union-find.
fn reference(spec: &JobSpec, inputs: &[PathBuf]) -> (BTreeSet<PairKey>, BTreeMap<DocId, DocKey>) {
    let config = JobConfig::new(spec.clone(), inputs, "unused".into()).unwrap();
    let segmenter =
        Signer::needs_segmenter(&config).then(|| Segmenter::new(spec.features.jieba_hmm));
    let corpus_idf = config.needs_corpus_idf().then(|| {
        // The corpus pass: every readable document with features, its features counted once.
        let analyzer = Signer::analyzer_for(&config, segmenter.clone());
        let mut sketch = CountMinSketch::new(4, 20);
        let mut documents = 0;
        let mut scratch = neardup_text::AnalyzeScratch::default();
        for file in &config.inputs {
            for record in
                RecordReader::open(file, &spec.input.read_options(), spec.input.on_read_error)
                    .unwrap()
            {
                if let Record::Doc(d) = record.unwrap() {
                    let analysis = analyzer.analyze(&d.text, &mut scratch);
                    if !analysis.features.is_empty() {
                        documents += 1;
                        analysis.features.hashes().iter().for_each(|h| sketch.add(*h));
                    }
                }
            }
        }
        IdfWeights::Corpus { sketch, documents }
    });
    let signer = Signer::new(&config, segmenter, corpus_idf);
    let mut scratch = SignScratch::default();
    let mut rejects: Vec<RejectedRecord> = Vec::new();
    let mut accepted: Vec<SignedDoc> = Vec::new();
    let mut seen_ids: HashMap<String, DocId> = HashMap::new();
    for file in &config.inputs {
        for record in
            RecordReader::open(file, &spec.input.read_options(), spec.input.on_read_error).unwrap()
        {
            // An id belongs to its first record, even a rejected one.
            let record = record.unwrap();
            let (doc, id) = match &record {
                Record::Doc(d) => (d.doc, Some(d.id.clone())),
                Record::Reject(r) => (r.doc, r.id.clone()),
            };
            let first = id.as_ref().and_then(|id| seen_ids.get(id).copied());
            if let (Some(id), None) = (&id, first) {
                seen_ids.insert(id.clone(), doc);
            }
            match record {
                Record::Reject(r) => rejects.push(r),
                Record::Doc(d) => match signer.sign(d, &mut scratch) {
                    Err(r) => rejects.push(r),
                    Ok(s) if first.is_some() => {
                        assert!(first.unwrap() < s.doc, "records are read in DocId order");
                        rejects.push(RejectedRecord {
                            doc: s.doc,
                            id: Some(s.id),
                            reason: Reason::DuplicateId,
                            detail: String::new(),
                        });
                    }
                    Ok(s) => accepted.push(s),
                },
            }
        }
    }
    let n = accepted.len();
    let mut uf = UnionFind::new(n);
    // Near pairs between representatives, and each document's representative.
    let mut near_edges: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut rep_index: Vec<usize> = (0..n).collect();
    let mut pairs = BTreeSet::new();
    let mut rep_of_content = HashMap::new();
    let mut reps = Vec::new();
    for (i, d) in accepted.iter().enumerate() {
        match rep_of_content.get(&d.content) {
            Some(&r) => {
                let (a, b): (&SignedDoc, &SignedDoc) = (&accepted[r], d);
                let (x, y) = if a.id < b.id { (a, b) } else { (b, a) };
                pairs.insert((x.id.clone(), y.id.clone(), PairKind::Exact, 1f64.to_bits()));
                uf.union(r, i);
                rep_index[i] = r;
            }
            None => {
                rep_of_content.insert(d.content, i);
                if d.signature.is_some() {
                    reps.push(i);
                }
            }
        }
    }
    let keys: Vec<Vec<BucketKey>> = match &config.params {
        MethodParams::Minhash { lsh, .. } => reps
            .iter()
            .map(|&i| match accepted[i].signature.as_ref().unwrap() {
                Signature::MinHash(s) => lsh.band_keys(s, spec.seed).collect(),
                Signature::SimHash(_) => unreachable!(),
            })
            .collect(),
        MethodParams::Simhash { layout, max_distance, .. } => {
            let layout = layout
                .clone()
                .unwrap_or_else(|| BlockLayout::choose(*max_distance, reps.len() as u64).unwrap());
            reps.iter()
                .map(|&i| match accepted[i].signature.as_ref().unwrap() {
                    Signature::SimHash(f) => layout.keys(*f, spec.seed).collect(),
                    Signature::MinHash(_) => unreachable!(),
                })
                .collect()
        }
    };
    let verifier = match &config.params {
        MethodParams::Minhash { lsh, .. } => config.minhash_spec().verifier(*lsh),
        MethodParams::Simhash { layout, max_distance, .. } => neardup_core::Verifier::SimHash {
            layout: layout
                .clone()
                .unwrap_or_else(|| BlockLayout::choose(*max_distance, reps.len() as u64).unwrap()),
        },
    };
    // Buckets with their members in DocId order (reps are), and the cut for huge buckets:
    // members are compared with the first bucket_anchors members only.
    let mut buckets: BTreeMap<BucketKey, Vec<usize>> = BTreeMap::new();
    for (x, keys_x) in keys.iter().enumerate() {
        for key in keys_x {
            buckets.entry(*key).or_default().push(x);
        }
    }
    let mut candidates: BTreeSet<(usize, usize)> = BTreeSet::new();
    for members in buckets.values() {
        let anchors = if members.len() > spec.buckets.max_bucket_size {
            spec.buckets.bucket_anchors
        } else {
            members.len()
        };
        for (i, x) in members.iter().enumerate().take(anchors) {
            for y in &members[i + 1..] {
                candidates.insert((*x, *y));
            }
        }
    }
    for (x, y) in candidates {
        {
            let (a, b) = (&accepted[reps[x]], &accepted[reps[y]]);
            let v = verifier.verify(side(a), side(b));
            if v.is_duplicate {
                let (p, q) = if a.id < b.id { (a, b) } else { (b, a) };
                pairs.insert((p.id.clone(), q.id.clone(), PairKind::Near, v.similarity.to_bits()));
                uf.union(reps[x], reps[y]);
                near_edges.insert((reps[x].min(reps[y]), reps[x].max(reps[y])));
            }
        }
    }
    // Keep rule: first = smallest DocId; longest = most chars, then smallest DocId.
    let mut kept_of_root: HashMap<usize, usize> = HashMap::new();
    for i in 0..n {
        let root = uf.find(i);
        let better = |k: usize| match spec.decision.keep {
            KeepRule::First => accepted[i].doc < accepted[k].doc,
            KeepRule::Longest => {
                (accepted[i].chars, std::cmp::Reverse(accepted[i].doc))
                    > (accepted[k].chars, std::cmp::Reverse(accepted[k].doc))
            }
        };
        match kept_of_root.get(&root) {
            Some(&k) if !better(k) => {}
            _ => {
                kept_of_root.insert(root, i);
            }
        }
    }
    let mut docs = BTreeMap::new();
    for i in 0..n {
        let d = &accepted[i];
        let size = uf.set_size(i) as u64;
        let kept = kept_of_root[&uf.find(i)];
        let unmatched = d.signature.is_none().then_some(Reason::TooFewFeatures);
        let row = if kept == i {
            (
                Some(d.id.clone()),
                Decision::Keep,
                Some(d.id.clone()),
                Some(size),
                None,
                unmatched,
                None,
            )
        } else {
            let k = &accepted[kept];
            let reason =
                if k.content == d.content { Reason::ExactDuplicate } else { Reason::NearDuplicate };
            // Verified: identical texts, or the representatives of the two texts were
            // compared and passed.
            let (rep_doc, rep_kept) = (rep_index[i], rep_index[kept]);
            let verified = rep_doc == rep_kept
                || near_edges.contains(&(rep_doc.min(rep_kept), rep_doc.max(rep_kept)));
            (
                Some(d.id.clone()),
                Decision::Remove,
                Some(k.id.clone()),
                Some(size),
                Some(k.id.clone()),
                Some(reason),
                Some(verified),
            )
        };
        docs.insert(d.doc, row);
    }
    for r in rejects {
        docs.insert(r.doc, (r.id, Decision::Reject, None, None, None, Some(r.reason), None));
    }
    (pairs, docs)
}

fn check_workers_and_reference(spec: JobSpec, corpus_spec: &CorpusSpec, files: usize) {
    let dir = tempfile::tempdir().unwrap();
    let inputs = corpus(dir.path(), corpus_spec, files);
    let expected = reference(&spec, &inputs);
    let count = |decision| expected.1.values().filter(|d| d.1 == decision).count();
    eprintln!(
        "reference: {} pairs ({} near), {} documents, {} removed, {} rejected",
        expected.0.len(),
        expected.0.iter().filter(|p| p.2 == PairKind::Near).count(),
        expected.1.len(),
        count(Decision::Remove),
        count(Decision::Reject)
    );
    assert!(expected.0.iter().any(|p| p.2 == PairKind::Near), "the corpus has near pairs");
    assert!(expected.0.iter().any(|p| p.2 == PairKind::Exact), "the corpus has exact pairs");
    assert!(expected.1.values().any(|d| d.6 == Some(false)), "some removals are chained");
    assert!(expected.1.values().any(|d| d.5 == Some(Reason::DuplicateId)), "ids repeat");
    let mut counts = Vec::new();
    for workers in [1, 2, 8] {
        let out = dir.path().join(format!("out-{workers}"));
        let (got, summary) = run_on(&spec, &inputs, out, &Topology::local(workers));
        assert_eq!(got.0, expected.0, "{workers} workers: pairs differ from the reference");
        assert_eq!(got.1, expected.1, "{workers} workers: documents differ from the reference");
        counts.push(serde_json::to_value(&summary.counts).unwrap());
    }
    assert!(
        counts.windows(2).all(|w| w[0] == w[1]),
        "summary counts depend on workers: {counts:?}"
    );
    let radii = counts[0]["clusters_by_radius"].as_object().unwrap();
    assert!(radii.keys().any(|r| r != "1"), "chained clusters have a radius above 1: {radii:?}");
}

#[test]
fn minhash_is_independent_of_workers_and_matches_brute_force() {
    check_workers_and_reference(JobSpec::default(), &CorpusSpec::default(), 2);
}

#[test]
fn simhash_is_independent_of_workers_and_matches_brute_force() {
    let mut spec = JobSpec { method: Method::Simhash, ..JobSpec::default() };
    spec.simhash.max_distance = Some(6);
    check_workers_and_reference(spec, &CorpusSpec { seed: 8, ..CorpusSpec::default() }, 2);
}

#[test]
fn simhash_tf_idf_with_corpus_frequencies_matches_brute_force() {
    let mut spec = JobSpec { method: Method::Simhash, ..JobSpec::default() };
    spec.simhash.max_distance = Some(6);
    spec.simhash.weighting = Some(neardup_job::Weighting::TfIdf);
    spec.features.kind = neardup_text::FeatureKind::Words;
    check_workers_and_reference(
        spec,
        &CorpusSpec { seed: 12, originals: 200, ..CorpusSpec::default() },
        2,
    );
}

#[test]
fn longest_keep_rule_word_features_and_exact_jaccard() {
    let mut spec = JobSpec::default();
    spec.decision.keep = KeepRule::Longest;
    spec.features.kind = neardup_text::FeatureKind::WordShingles;
    spec.features.shingle_words = 2;
    spec.minhash.threshold = Some(0.7);
    spec.minhash.verify = neardup_core::JaccardMode::Exact;
    check_workers_and_reference(
        spec,
        &CorpusSpec { seed: 9, originals: 150, ..CorpusSpec::default() },
        3,
    );
}

#[test]
fn many_files_are_signed_where_they_are_read() {
    // 40 files: at least 4 per worker even with 8 workers, so records are not spread
    // before signing.
    check_workers_and_reference(
        JobSpec::default(),
        &CorpusSpec { seed: 13, ..CorpusSpec::default() },
        40,
    );
}

#[test]
fn cut_buckets_follow_the_anchor_rule() {
    // Many near copies of few originals, and tiny bucket limits, so most buckets are cut.
    let corpus_spec = CorpusSpec {
        seed: 10,
        originals: 20,
        max_near_copies: 12,
        edit_rate: 0.01,
        ..CorpusSpec::default()
    };
    let mut spec = JobSpec::default();
    spec.buckets.max_bucket_size = 3;
    spec.buckets.bucket_anchors = 1;
    check_workers_and_reference(spec.clone(), &corpus_spec, 2);
    let dir = tempfile::tempdir().unwrap();
    let inputs = corpus(dir.path(), &corpus_spec, 2);
    run_job(&spec, &inputs, dir.path().join("out"), 2);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/summary.json")).unwrap())
            .unwrap();
    assert!(summary["lsh"]["cut_buckets"].as_u64().unwrap() > 0, "{}", summary["lsh"]);
}

/// A budget so small that every grouping stage spills sorted runs and the input is read in
/// many rounds: the results are those of the reference all the same.
fn check_spilling(spec: JobSpec, corpus_spec: &CorpusSpec) {
    let dir = tempfile::tempdir().unwrap();
    let inputs = corpus(dir.path(), corpus_spec, 2);
    let expected = reference(&spec, &inputs);
    for workers in [1, 3] {
        let spill_dir = dir.path().join(format!("spill-{workers}"));
        std::fs::create_dir(&spill_dir).unwrap();
        let topology =
            Topology { memory_budget: 1, spill_dir: spill_dir.clone(), ..Topology::local(workers) };
        let (got, summary) =
            run_on(&spec, &inputs, dir.path().join(format!("out-{workers}")), &topology);
        assert!(summary.spilled_bytes > 0, "{workers} workers: nothing was spilled");
        assert!(
            summary.input_rounds > 2,
            "{workers} workers: read in {} rounds",
            summary.input_rounds
        );
        assert_eq!(got.0, expected.0, "{workers} workers: pairs differ when spilling");
        assert_eq!(got.1, expected.1, "{workers} workers: documents differ when spilling");
        let left: Vec<_> = std::fs::read_dir(&spill_dir).unwrap().collect();
        assert!(left.is_empty(), "spill folders are removed at the end: {left:?}");
    }
}

#[test]
fn minhash_spilling_to_disk_gives_the_same_results() {
    check_spilling(
        JobSpec::default(),
        &CorpusSpec { seed: 21, originals: 600, ..CorpusSpec::default() },
    );
}

#[test]
fn simhash_spilling_to_disk_gives_the_same_results() {
    let mut spec = JobSpec { method: Method::Simhash, ..JobSpec::default() };
    spec.simhash.max_distance = Some(6);
    check_spilling(spec, &CorpusSpec { seed: 22, originals: 600, ..CorpusSpec::default() });
}

fn side(d: &SignedDoc) -> neardup_core::Side<'_> {
    neardup_core::Side {
        signature: d.signature.as_ref().unwrap(),
        features: d.features,
        feature_set: &d.feature_set,
    }
}

#[test]
fn containment_matches_brute_force() {
    // A high threshold with a containment rule below it: most near pairs pass by
    // containment, on bands chosen for the rule's Jaccard floor.
    let mut spec = JobSpec::default();
    spec.minhash.threshold = Some(0.95);
    spec.minhash.containment = Some(0.8);
    spec.minhash.containment_min_jaccard = 0.6;
    // One n-gram length for every script: the generated copies then chain as the check
    // needs (with Han 2-grams its Chinese copies are all verified with their kept one).
    spec.features.han_ngram_chars = Some(5);
    let corpus_spec = CorpusSpec { seed: 14, originals: 200, ..CorpusSpec::default() };
    check_workers_and_reference(spec.clone(), &corpus_spec, 2);
    let dir = tempfile::tempdir().unwrap();
    let inputs = corpus(dir.path(), &corpus_spec, 2);
    run_job(&spec, &inputs, dir.path().join("out"), 2);
    let pairs = neardup_io::read_pairs(&dir.path().join("out/pairs")).unwrap();
    let by = |m| pairs.iter().filter(|p| p.measure == Some(m)).count();
    use neardup_core::Measure;
    assert!(by(Measure::Containment) > 0 && by(Measure::Jaccard) > 0, "{pairs:?}");
    for p in &pairs {
        match p.measure {
            Some(Measure::Containment) => {
                assert!(p.similarity < 0.95 && p.similarity >= 0.6, "{p:?}");
                assert!(p.containment.unwrap() >= 0.8, "{p:?}");
            }
            Some(_) => assert!(p.similarity >= 0.95 && p.containment.is_some(), "{p:?}"),
            None => assert_eq!(p.kind, PairKind::Exact),
        }
    }
}
