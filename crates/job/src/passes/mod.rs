//! The passes of the workers over the input: the corpus passes that learn templates and
//! document frequencies (`corpus`, `templates`), and the main pass (`worker`, fed by
//! `feed`), each a value given to the pass runner (`runner`).
//!
//! May use: `error`, `distributed`, `settings`, `storage`, `reporting`, `input`,
//! `operators`.

pub(crate) mod corpus;
pub(crate) mod feed;
pub(crate) mod runner;
pub(crate) mod templates;
pub(crate) mod worker;
