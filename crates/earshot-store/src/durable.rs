//! The durable records of a store in one place, for tools, benches and tests: the revision
//! record and backends (kernel), each domain's record types, and the composed `Records`.

pub use crate::compose::{encode_records, rebuild_snapshot, Records};
pub use crate::devices::records::{
    CapabilityRecord, ConstraintsRecord, DeviceRecord, DeviceRecords, EdgeRecord, SchemaRecord,
};
pub use crate::kernel::backend::{Backend, MemoryBackend, MetaRecord, Op, SledBackend, DEFAULT_MIN_FREE_BYTES};
pub use crate::memory::durable::{
    AudienceRecord, ContentRecord, GrantRecord, IdentityRecord, ItemRecord, MemoryRecords, ParticipantRecord,
};
