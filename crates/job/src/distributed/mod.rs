//! The machinery of a run on several processes: the topology of processes and workers, the
//! connections between them (the mesh, which a peer's failure or an outside stop breaks),
//! the bytes they exchange, and the interrupt that stops a run.
//!
//! May use: `error`.

pub(crate) mod interrupt;
pub(crate) mod mesh;
pub(crate) mod processes;
pub(crate) mod traffic;
