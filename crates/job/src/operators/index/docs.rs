//! This worker's `docs/` part of the new index generation ([`IndexDocs`]), which
//! `WriteDocuments` fills as it makes the rows of `documents/` (a document's home worker
//! is its part).

use std::sync::Arc;

use neardup_core::DocId;
use neardup_io::index::{DocPartWriter, IndexRef, IndexedDoc};

use crate::operators::sink::{Batched, PartSink};
use crate::operators::store::SigCursor;
use crate::settings::config::IndexPlan;
use crate::storage::records::{Assignment, DocMeta, encode_signature};
use crate::storage::spill::SpillError;

/// Every representative of this worker, with its signature (none when it had too few
/// features) and its cluster's kept document.
pub struct IndexDocs {
    pub(crate) plan: Arc<IndexPlan>,
    signatures: SigCursor,
    part: Batched<DocPartWriter>,
}

impl IndexDocs {
    /// The part of the generation `plan` writes, reading signatures from `signatures`.
    pub fn new(plan: Arc<IndexPlan>, signatures: SigCursor) -> Self {
        let dir = plan.new_generation_dir();
        let create = Box::new(move |sink: &PartSink| DocPartWriter::create(&dir, sink.part as u32));
        IndexDocs { plan, signatures, part: Batched::new(create) }
    }

    /// Adds `doc` when it is a representative: with its signature when it has one (it is in
    /// the store), with none when it had too few features (matched by content only).
    pub fn add(
        &mut self,
        doc: DocId,
        meta: &DocMeta,
        source: &str,
        assignment: Option<&Assignment>,
        sink: &PartSink,
    ) -> Result<(), SpillError> {
        let signature = match self.signatures.get(doc)? {
            Some(entry) => encode_signature(&entry.signature),
            None if meta.representative => Vec::new(),
            None => return Ok(()),
        };
        let generation = self.plan.generation;
        let (kept, kept_id, kept_content) = match assignment {
            Some(a) => match &a.indexed {
                Some(ik) => (ik.kept, ik.kept_id.clone(), ik.kept_content),
                None => (
                    IndexRef { generation, doc: a.kept.get() },
                    a.kept_id.clone(),
                    a.kept_content.get(),
                ),
            },
            None => (IndexRef { generation, doc: doc.get() }, meta.id.clone(), meta.content.get()),
        };
        let row = IndexedDoc {
            generation,
            doc: doc.get(),
            id: meta.id.clone(),
            source: source.to_string(),
            kept,
            kept_id,
            kept_content,
            content: meta.content.get(),
            signature,
            features: meta.features,
        };
        self.part.add(row, sink);
        Ok(())
    }

    /// Writes what is left and completes the part, when it has rows.
    pub fn finish(&mut self, sink: &PartSink) {
        let written = self.part.finish(sink, false);
        sink.stats.borrow_mut().index.documents_written += written;
    }
}
