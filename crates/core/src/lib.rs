//! Signatures and locality-sensitive hashing for near-duplicate detection.
//!
//! This crate holds the algorithms of neardup with no I/O, threads or dataflow, so each can
//! be tested alone: the seeded hash every output depends on ([`hash`]), document and bucket
//! identifiers, MinHash signatures with banded LSH and the choice of bands and rows from a
//! threshold, SimHash fingerprints with pigeonhole block tables, and the verification of
//! candidate pairs. Text processing lives in `neardup-text`; the dataflow in `neardup-job`.
//!
//! ```
//! use neardup_core::{LshParams, MinHasher, jaccard_sorted};
//!
//! let hasher = MinHasher::try_new(128, 42).unwrap();
//! let a: Vec<u64> = (0..100).collect();
//! let b: Vec<u64> = (5..105).collect();
//! let (sa, sb) = (hasher.sign(&a), hasher.sign(&b));
//! let exact = jaccard_sorted(&a, &b); // 95 / 105
//! assert!((sa.jaccard_estimate(&sb) - exact).abs() < 0.15);
//!
//! let lsh = LshParams::choose(0.8, 128, 0.5, 0.5).unwrap();
//! assert_eq!((lsh.bands(), lsh.rows()), (9, 13));
//! let shared = lsh.band_keys(&sa, 7).zip(lsh.band_keys(&sb, 7)).filter(|(x, y)| x == y);
//! assert!(shared.count() <= 9);
//! ```

mod error;
pub mod hash;
mod ids;
mod lsh;
mod minhash;
mod signature;
mod simd;
mod simhash;
mod sketch;

pub use error::{Error, Result};
pub use ids::{BucketKey, ContentHash, DocId};
pub use lsh::LshParams;
pub use minhash::{MAX_NUM_PERM, MinHashSignature, MinHasher, agreements_at_most, jaccard_sorted};
pub use signature::{Containment, JaccardMode, Measure, Side, Signature, Verification, Verifier};
pub use simd::SimdLevel;
pub use simhash::{BlockLayout, CANDIDATE_COST, MAX_TABLES, SIMHASH_BITS, SimHash};
pub use sketch::CountMinSketch;

/// Version of the signature format: the hash scheme, permutation scheme, band and block key
/// derivation, and what a document is signed from where no setting names it (the
/// template learning of web pages). Signatures and bucket keys of equal versions (and
/// equal settings) are equal across machines and releases; any change to them bumps this.
/// CHANGELOG.md lists the versions.
pub const SIGNATURE_VERSION: u32 = 8;
