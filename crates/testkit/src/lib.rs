//! Test helpers for neardup: seeded corpora with planted duplicates, and references.
//!
//! [`generate`] builds a corpus of English, Chinese and mixed documents from a seed
//! (ChaCha8, so the corpus is the same on every machine and release), with exact copies,
//! near copies (a few words replaced, inserted or deleted), repeated ids and malformed
//! records. [`UnionFind`] is the sequential reference for clusters. [`skip`] is how a test
//! that needs a missing server or browser says so, or fails where that is required.

mod corpus;
mod skip;
mod union_find;

pub use corpus::{CorpusSpec, GeneratedRecord, RecordKind, generate, write_jsonl};
pub use skip::skip;
pub use union_find::UnionFind;
