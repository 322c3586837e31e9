//! Signing throughput per instruction-set level: `cargo bench -p neardup-core`.
//!
//! Prints documents per second for MinHash (128 and 256 permutations) and SimHash over
//! feature sets of typical sizes. A plain timing loop (best of five rounds), so the
//! benchmark adds no dependencies to the build.

use std::hint::black_box;
use std::time::Instant;

use neardup_core::hash::splitmix64;
use neardup_core::{MinHasher, SimHash, SimdLevel};

/// Seconds per call of `f`, best of five rounds of `calls` calls.
fn best_of_five(calls: usize, mut f: impl FnMut()) -> f64 {
    (0..5)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls {
                f();
            }
            start.elapsed().as_secs_f64() / calls as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    println!("{:<32} {:>10} {:>12} {:>14}", "loop", "features", "us/doc", "docs/s");
    for features in [100usize, 1000, 10_000] {
        let set: Vec<u64> = (0..features as u64).map(splitmix64).collect();
        let calls = 2_000_000 / features;
        for num_perm in [128, 256] {
            for level in SimdLevel::available() {
                let hasher = MinHasher::try_new(num_perm, 1).expect("valid").with_simd(level);
                let t = best_of_five(calls, || {
                    black_box(hasher.sign(black_box(&set)));
                });
                let name = format!("minhash-{num_perm} {level:?}");
                println!("{name:<32} {features:>10} {:>12.2} {:>14.0}", t * 1e6, 1.0 / t);
            }
        }
        let weighted: Vec<(u64, f64)> = set.iter().map(|h| (*h, 1.0 + (*h % 3) as f64)).collect();
        let t = best_of_five(calls, || {
            black_box(SimHash::from_weighted(black_box(&weighted).iter().copied()));
        });
        let name = format!("simhash-64 weighted {:?}", SimdLevel::detect());
        println!("{name:<32} {features:>10} {:>12.2} {:>14.0}", t * 1e6, 1.0 / t);
        let counts: Vec<u32> = set.iter().map(|h| 1 + (*h % 3) as u32).collect();
        let t = best_of_five(calls, || {
            black_box(SimHash::from_counts(black_box(&set), black_box(&counts)));
        });
        let name = format!("simhash-64 counts {:?}", SimdLevel::detect());
        println!("{name:<32} {features:>10} {:>12.2} {:>14.0}", t * 1e6, 1.0 / t);
    }
}
