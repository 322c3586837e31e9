//! Bucket reduction: `cargo bench -p neardup-job --bench buckets`.
//!
//! The bucket records of a generated corpus with planted near copies (neardup-testkit),
//! MinHash 16 x 8 band keys and SimHash block-table keys, sorted by key and reduced to
//! candidate pairs as one worker's `ReduceBuckets` does, with throughput in records.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use neardup_core::{BlockLayout, BucketKey, DocId, LshParams, MinHasher, SimHash};
use neardup_job::{BucketReducer, BucketSpec};
use neardup_testkit::{CorpusSpec, generate};
use neardup_text::{AnalyzeScratch, Analyzer, FeatureConfig, NormalizeConfig};

/// Bucket records: a key and the document in its bucket.
type Records = Vec<(BucketKey, DocId)>;

/// The bucket records of every generated document, for MinHash and for SimHash.
fn records() -> (Records, Records) {
    let spec =
        CorpusSpec { originals: 20_000, bad_records: 0, repeated_ids: 0, ..Default::default() };
    let analyzer = Analyzer::new(NormalizeConfig::default(), FeatureConfig::default(), 42, None);
    let hasher = MinHasher::try_new(128, 42).expect("valid");
    let lsh = LshParams::try_new(16, 8).expect("valid");
    let layout = BlockLayout::choose(3, 30_000).expect("valid");
    let mut scratch = AnalyzeScratch::default();
    let (mut minhash, mut simhash) = (Vec::new(), Vec::new());
    for (record, generated) in generate(&spec).iter().enumerate() {
        let doc: serde_json::Value = serde_json::from_str(&generated.line).expect("JSON");
        let Some(text) = doc["text"].as_str() else { continue };
        let doc = DocId::new(0, record as u64 + 1);
        let analysis = analyzer.analyze(text, &mut scratch);
        let f = &analysis.features;
        minhash.extend(lsh.band_keys(&hasher.sign(f.hashes()), 42).map(|k| (k, doc)));
        let print = SimHash::from_counts(f.hashes(), f.counts());
        simhash.extend(layout.keys(print, 42).map(|k| (k, doc)));
    }
    (minhash, simhash)
}

fn reduce(c: &mut Criterion) {
    let (minhash, simhash) = records();
    let mut group = c.benchmark_group("bucket_reduce");
    group.sample_size(20);
    for (name, records) in [("minhash_16x8", &minhash), ("simhash_k3", &simhash)] {
        group.throughput(Throughput::Elements(records.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut sorted = records.clone();
                sorted.sort_unstable();
                let mut reducer = BucketReducer::new(BucketSpec::default());
                let mut candidates = 0u64;
                let mut emit = |_| candidates += 1;
                for (key, doc) in &sorted {
                    reducer.push(*key, *doc, &mut emit);
                }
                reducer.finish(&mut emit);
                black_box(candidates)
            });
        });
    }
    group.finish();
}

criterion_group!(benches, reduce);
criterion_main!(benches);
