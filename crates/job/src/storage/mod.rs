//! How records are held and kept: the records the dataflow exchanges, their framed runs on
//! disk, the spill that bounds what a stage holds, the logs of records and signatures that
//! a pass keeps for the next, and the routing of a key to its worker. Nothing here knows
//! about settings, passes or outputs.
//!
//! May use: `error`.

pub(crate) mod frames;
pub(crate) mod record_log;
pub(crate) mod records;
pub(crate) mod routing;
pub(crate) mod sig_log;
pub(crate) mod spill;
