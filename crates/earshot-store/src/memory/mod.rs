//! The memory domain (SPEC §1): participants and identities, audiences, items and their
//! content, grants, derivations and lifecycle, the postings that answer check and lookup, the
//! flat evaluator, search and context assembly. It plugs into the kernel through the composed
//! snapshot (see `crate::handle`).

pub(crate) mod apply;
pub(crate) mod context;
pub mod durable;
pub mod flat;
pub(crate) mod graph;
pub(crate) mod layered;
pub mod model;
pub(crate) mod read;
pub mod search;
pub(crate) mod snapshot;
pub mod verify;
