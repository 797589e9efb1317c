//! The memory domain (SPEC §1): participants and identities, audiences, items and their
//! content, grants, derivations and lifecycle, the postings that answer check and lookup, the
//! flat evaluator and the search projection. It plugs into the kernel through the composed
//! snapshot (see `crate::compose`). Context assembly, which runs on a running store (its search
//! projection, attempts and backend), is composed at the crate root (`crate::context`).

pub(crate) mod apply;
pub mod consent;
pub mod dense;
pub mod durable;
pub mod flat;
pub(crate) mod graph;
pub(crate) mod id_table;
pub(crate) mod layered;
pub(crate) mod line_build;
pub mod model;
pub(crate) mod name_overlay;
pub(crate) mod read;
pub mod search;
pub(crate) mod snapshot;
pub mod trust;
pub mod verify;
