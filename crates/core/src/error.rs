//! The errors of checking parameters.

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
