//! Where the two domains meet each other and the kernel: the composed [`Snapshot`] is the
//! kernel's `State` (its records, commands and dirty sets are those of both domains), and the
//! device reads, which need the participants' names from the memory part, are offered on it.

use earshot_core::condition::RequestContext;

use crate::devices::model::{AuthorizeView, ChainView, DependentsView, SchemaView};
use crate::devices::{Devices, RawAuthorization};
use crate::error::{Result, StoreError};
use crate::kernel::backend::Op;
use crate::kernel::State;
use crate::memory::apply::{Apply, Dirty};
use crate::memory::durable::{encode, rebuild, Records};
use crate::memory::graph::Provenance;
use crate::memory::model::{Command, WriteOutcome};
use crate::memory::snapshot::Snapshot;

/// The composed snapshot is the kernel's state: memory and devices records project into it, and
/// a command is applied by the memory or device half it belongs to.
impl State for Snapshot {
    type Aside = Provenance;
    type Command = Command;
    type Outcome = WriteOutcome;
    type Dirty = Dirty;

    fn load(store: &str, raw: &[(Vec<u8>, Vec<u8>)]) -> Result<(Self, Provenance)> {
        rebuild(store, &Records::decode(raw)?)
    }
    fn revision(&self) -> u64 {
        self.revision
    }
    fn committed_at_ms(&self) -> i64 {
        self.committed_at_ms
    }
    fn stamp(&mut self, revision: u64, committed_at_ms: i64) {
        self.revision = revision;
        self.committed_at_ms = committed_at_ms;
    }
    fn apply(
        &self,
        graph: &mut Provenance,
        cmd: Command,
        now_ms: i64,
        new_id: &mut dyn FnMut() -> String,
    ) -> Result<(WriteOutcome, Option<(Self, Dirty)>)> {
        let mut a = Apply { snap: self.clone(), graph, now_ms, dirty: Dirty::default(), new_id };
        let out = a.run(cmd)?;
        Ok((out, (!a.dirty.is_empty()).then_some((a.snap, a.dirty))))
    }
    fn encode(&self, dirty: &Dirty) -> Result<Vec<Op>> {
        encode(self, dirty)
    }
}

impl Snapshot {
    /// The device part with the participants' names.
    pub(crate) fn devices(&self) -> Devices<'_> {
        Devices { dev: &self.dev, names: self }
    }

    /// `authorize(principal, device, path, action, context)` at this snapshot and `now_ms`.
    /// A malformed path is an error; unknown names are denials.
    pub fn authorize_raw(
        &self,
        principal: &str,
        device: &str,
        path: &str,
        action: &str,
        now_ms: i64,
        ctx: &RequestContext,
    ) -> Result<RawAuthorization> {
        self.devices().authorize_raw(principal, device, path, action, now_ms, ctx)
    }

    /// [`Snapshot::authorize_raw`], rendered for clients.
    pub fn authorize(
        &self,
        principal: &str,
        device: &str,
        path: &str,
        action: &str,
        now_ms: i64,
        ctx: &RequestContext,
    ) -> Result<AuthorizeView> {
        self.devices().authorize(principal, device, path, action, now_ms, ctx)
    }

    /// `GET /capabilities/{c}/chain`.
    pub fn capability_chain(&self, id: &str) -> Result<ChainView> {
        self.devices().capability_chain(id)
    }

    /// `GET /capabilities/{c}/dependents`: what revoking `id` would invalidate.
    pub fn capability_dependents(&self, id: &str) -> Result<DependentsView> {
        self.devices().capability_dependents(id)
    }

    /// `GET /schema`: the declared relations, their live edges, and the unexercised ones.
    pub fn schema_view(&self) -> Result<SchemaView> {
        self.devices().schema_view()
    }
}

/// Compares `live` with a rebuild from `records` (both domains, and the provenance graph); the
/// error names the first few differences.
pub(crate) fn agreement(live: &Snapshot, records: &Records) -> Result<String> {
    let (rebuilt, graph) = rebuild(live.store(), records)?;
    crate::memory::verify::graph_agrees(&rebuilt, &graph)?;
    let facts = |s: &Snapshot| {
        let mut out = crate::memory::verify::facts(s);
        crate::devices::verify::facts(&s.dev, s, &mut out);
        out.sort();
        out
    };
    let a = facts(live);
    let b = facts(&rebuilt);
    if a == b {
        return Ok(format!("revision {}, {} items, {} facts agree", live.revision, live.items.len(), a.len()));
    }
    let only_live: Vec<&String> = a.iter().filter(|x| b.binary_search(x).is_err()).take(5).collect();
    let only_disk: Vec<&String> = b.iter().filter(|x| a.binary_search(x).is_err()).take(5).collect();
    Err(StoreError::Integrity(format!(
        "index disagrees with records: only in index {only_live:?}; only on disk {only_disk:?}"
    )))
}
