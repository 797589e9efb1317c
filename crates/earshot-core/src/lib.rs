//! Pure rules of Earshot: identifiers, audiences and their digests, admission, data-subject consent
//! (SPEC §6.3), origin-bound integrity (SPEC §6.2), derivation, lifecycle, and for devices (SPEC §2):
//! path patterns, the relation schema, capability narrowing, conditions.
//!
//! Nothing in this crate does I/O, blocks, allocates threads or knows about async runtimes: every
//! function is a function of its arguments. The store feeds it a snapshot; the API never calls it
//! directly for decisions. See `ARCHITECTURE.md` at the repository root.

pub mod actions;
pub mod admission;
pub mod aggregation;
pub mod audience;
pub mod capability;
pub mod compact;
pub mod condition;
pub mod consent;
pub mod derivation;
pub mod id;
pub mod integrity;
pub mod lifecycle;
pub mod path;
pub mod schema;
pub mod viewers;

pub use admission::{decide, AuthSet, Basis, Decision, Reason};
pub use audience::{AudienceDigest, AudienceKind, MemberSet};
pub use derivation::{Disposition, SuppressReason};
pub use id::{validate_id, IdError, MAX_ID_LEN};
pub use integrity::Role;
pub use lifecycle::{Action, Currentness, State, TransitionError};
pub use viewers::{Quality, Viewers};
