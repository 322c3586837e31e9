//! Routing keys for exchanges: fixed-seed hashes, equal in every process.

use neardup_core::hash::route;
use neardup_core::{ContentHash, DocId};

/// The routing key of a document (its signature's home worker).
pub fn route_doc(doc: DocId) -> u64 {
    route(doc.get())
}

/// The 128-bit hash of a record's id, for finding repeated ids: equal ids have equal
/// hashes, and distinct ids collide with probability 2^-128.
pub fn id_hash(id: &str) -> u128 {
    ContentHash::of_text(id, 0x6964).get()
}

/// The routing key of an id hash.
pub fn route_id(hash: u128) -> u64 {
    (hash as u64) ^ ((hash >> 64) as u64)
}
