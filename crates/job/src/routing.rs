//! Routing keys for exchanges: fixed-seed hashes, equal in every process.

use neardup_core::DocId;
use neardup_core::hash::{SeedPurpose, derive_seed, hash_bytes, route};

/// The routing key of a document (its signature's home worker).
pub fn route_doc(doc: DocId) -> u64 {
    route(doc.get())
}

/// The routing key of a string, such as a document id.
pub fn route_str(s: &str) -> u64 {
    hash_bytes(s.as_bytes(), derive_seed(0, SeedPurpose::Route, 0))
}
