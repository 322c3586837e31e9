//! Signing kernels per instruction-set level: `cargo bench -p neardup-core`.
//!
//! MinHash (128 and 256 permutations) and SimHash (float weights, whole-number counts)
//! over feature sets of 100, 1,000 and 10,000 hashes, with throughput in features.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use neardup_core::hash::splitmix64;
use neardup_core::{MinHashSignature, MinHasher, SimHash, SimdLevel};

fn signatures(c: &mut Criterion) {
    let mut group = c.benchmark_group("sign");
    for features in [100usize, 1000, 10_000] {
        let set: Vec<u64> = (0..features as u64).map(splitmix64).collect();
        group.throughput(Throughput::Elements(features as u64));
        for num_perm in [128, 256] {
            for level in SimdLevel::available() {
                let hasher = MinHasher::try_new(num_perm, 1).expect("valid").with_simd(level);
                let id = BenchmarkId::new(format!("minhash_{num_perm}_{level:?}"), features);
                group.bench_with_input(id, &set, |b, set| {
                    let mut out = MinHashSignature::default();
                    b.iter(|| hasher.sign_into(black_box(set), &mut out));
                });
            }
        }
        let weighted: Vec<(u64, f64)> = set.iter().map(|h| (*h, 1.0 + (*h % 3) as f64)).collect();
        group.bench_with_input(
            BenchmarkId::new("simhash_weighted", features),
            &weighted,
            |b, w| {
                b.iter(|| SimHash::from_weighted(black_box(w).iter().copied()));
            },
        );
        let counts: Vec<u32> = set.iter().map(|h| 1 + (*h % 3) as u32).collect();
        group.bench_with_input(BenchmarkId::new("simhash_counts", features), &set, |b, set| {
            b.iter(|| SimHash::from_counts(black_box(set), black_box(&counts)));
        });
    }
    group.finish();
}

criterion_group!(benches, signatures);
criterion_main!(benches);
