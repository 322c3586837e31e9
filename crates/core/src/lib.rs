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

pub mod hash;
mod ids;
mod lsh;
mod minhash;
mod signature;
mod simd;
mod simhash;
mod sketch;

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
pub const SIGNATURE_VERSION: u32 = 6;

/// Errors from checking parameters.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The number of MinHash permutations is out of range.
    #[error("num_perm must be between 1 and {max}, got {num_perm}")]
    NumPerm {
        /// What was asked for.
        num_perm: usize,
        /// The largest supported value.
        max: usize,
    },
    /// Bands and rows do not fit the signature.
    #[error("{bands} bands of {rows} rows do not fit a signature of {num_perm} permutations")]
    Bands {
        /// Bands asked for.
        bands: u32,
        /// Rows per band asked for.
        rows: u32,
        /// Permutations available (0 when a count was zero).
        num_perm: usize,
    },
    /// A Jaccard threshold outside (0, 1).
    #[error("threshold must be strictly between 0 and 1, got {threshold}")]
    Threshold {
        /// What was asked for.
        threshold: f64,
    },
    /// A SimHash block layout that cannot exist or has too many tables.
    #[error(
        "simhash blocks must exceed max_distance ({max_distance}), be at most 64, and give at most {max_tables} tables; got {blocks}"
    )]
    Blocks {
        /// Blocks asked for.
        blocks: u32,
        /// The Hamming distance.
        max_distance: u32,
        /// Upper bound on tables.
        max_tables: usize,
    },
}

/// Result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
