//! What the document store (`crate::operators::doc_store`) leaves for the later stages of
//! its worker: the verifier and block layout chosen, the signatures of the worker's
//! representatives and every document's metadata, and cursors that walk them alongside
//! records sorted by `DocId`.

use std::cell::RefCell;
use std::rc::Rc;

use neardup_core::{DocId, Verifier};

use crate::operators::collect::Keyed;
use crate::storage::records::{DocMeta, SigEntry};
use crate::storage::sig_log::{LogAt, LogReader, SigLogFile};
use crate::storage::spill::{Held, SortedFile, SpillError};

/// What the document store leaves for later stages of the same worker.
#[derive(Default)]
pub struct DocStore {
    /// Verifies candidate pairs; set before any bucket record is emitted.
    pub verifier: Option<Verifier>,
    /// The SimHash block count chosen.
    pub blocks: Option<u32>,
    /// Signatures of this worker's representatives, by `DocId`.
    pub signatures: Option<Signatures>,
    /// Whether stages after verification read the signatures (a run with an index
    /// matches against it and writes them to it).
    pub signatures_read_later: bool,
    /// Metadata of every accepted document of this worker, by `DocId`.
    pub meta: Option<SortedFile<Keyed<DocId, DocMeta>>>,
}

/// The signatures of a worker's signed representatives: where each is in the store's
/// signature log, by `DocId`, and the log.
#[derive(Clone)]
pub struct Signatures {
    pub(crate) index: SortedFile<Keyed<DocId, LogAt>>,
    pub(crate) log: SigLogFile,
}

impl Signatures {
    /// A cursor over them.
    ///
    /// # Errors
    /// When the index's file cannot be opened.
    pub(crate) fn cursor(&self) -> Result<SigCursor, SpillError> {
        Ok(SigCursor { index: Cursor::over(&self.index)?, log: self.log.reader() })
    }
}

/// Walks the signatures of the store alongside records sorted by `DocId`.
pub(crate) struct SigCursor {
    index: Cursor<LogAt>,
    log: LogReader,
}

impl SigCursor {
    /// A cursor over the store's signatures.
    pub(crate) fn open(store: &Rc<RefCell<DocStore>>) -> Result<Self, SpillError> {
        let store = store.borrow();
        let signatures =
            store.signatures.as_ref().expect("the store finished before any candidate arrived");
        signatures.cursor()
    }

    /// The signature of `doc`, or `None` when it is not a signed representative. Calls
    /// must come in `DocId` order.
    pub(crate) fn get(&mut self, doc: DocId) -> Result<Option<&SigEntry>, SpillError> {
        match self.index.get(doc)? {
            Some(&at) => Ok(Some(self.log.get(at)?)),
            None => Ok(None),
        }
    }

    /// The signature of `doc`.
    ///
    /// # Panics
    /// If `doc` is not stored here: candidates go to their documents' home workers, so a
    /// miss is a routing bug.
    pub(crate) fn find(&mut self, doc: DocId) -> Result<&SigEntry, SpillError> {
        let found = self.get(doc)?;
        Ok(found
            .unwrap_or_else(|| unreachable!("document {doc:?} is not stored on its home worker")))
    }
}

/// Walks a sorted file of the store (metadata, or the log positions of signatures)
/// alongside records sorted by `DocId`. Rows passed over are neither copied nor decoded: in
/// memory the cursor moves an index, in a file it reads each row's key from the first eight
/// bytes of its encoding (`Keyed` encodes its key first, and a `DocId` as its `u64`,
/// little-endian).
pub(crate) struct Cursor<V> {
    rows: Held<Keyed<DocId, V>>,
    /// In memory: the row at or after the last document asked for.
    at: usize,
    /// In a file: the last row decoded.
    current: Option<Keyed<DocId, V>>,
}

impl<V: serde::de::DeserializeOwned + Clone + 'static> Cursor<V> {
    /// A cursor over `file` (it keeps the file while open).
    pub(crate) fn over(file: &SortedFile<Keyed<DocId, V>>) -> Result<Self, SpillError> {
        Ok(Cursor { rows: file.held()?, at: 0, current: None })
    }

    /// The row of `doc`, or `None` when it has none (for signatures: not a signed
    /// representative). Calls must come in `DocId` order.
    pub(crate) fn get(&mut self, doc: DocId) -> Result<Option<&V>, SpillError> {
        let reader = match &mut self.rows {
            Held::Memory(rows) => {
                while self.at < rows.len() && rows[self.at].key < doc {
                    self.at += 1;
                }
                return Ok(rows.get(self.at).filter(|r| r.key == doc).map(|r| &r.value));
            }
            Held::File { reader, .. } => reader,
        };
        if self.current.as_ref().is_none_or(|c| c.key < doc) {
            let key = |bytes: &[u8]| {
                bytes.first_chunk::<8>().map(|k| DocId::from_raw(u64::from_le_bytes(*k)))
            };
            let row = reader.next_unless(|bytes| key(bytes).is_some_and(|k| k < doc));
            self.current = row.transpose()?;
        }
        Ok(self.current.as_ref().filter(|c| c.key == doc).map(|c| &c.value))
    }

    /// The row of `doc`.
    ///
    /// # Panics
    /// If `doc` is not stored here: candidates go to their documents' home workers, so a
    /// miss is a routing bug.
    pub(crate) fn find(&mut self, doc: DocId) -> Result<&V, SpillError> {
        let found = self.get(doc)?;
        Ok(found
            .unwrap_or_else(|| unreachable!("document {doc:?} is not stored on its home worker")))
    }
}
