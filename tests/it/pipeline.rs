//! The pipelined commit (`earshot_kernel::syncer`): a store's writer stages its next group while
//! the group before it is made durable, and still publishes nothing, answers nothing (not even
//! a refusal decided on a staged group), and lets no watcher or export read anything until it
//! is durable; a group that fails to become durable fails every group staged after it, and the
//! store rebuilds its state from its records.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use earshot_store::kernel::backend::Record;
use earshot_store::kernel::{KernelError, Ticket};
use earshot_store::model::{Command, NewItem, NewParticipant, OriginInput, OriginKeyword, ParticipantKind};
use earshot_store::{Backend, Config, Earshot, ManualClock, Op, SledBackend};

#[derive(Default)]
struct Gate {
    /// Whether syncs may go on.
    open: bool,
    /// Fail the next sync (after it is let through), as a failed `fdatasync` would.
    fail_next: bool,
    /// Stages so far.
    staged: usize,
    /// Syncs that have begun (and may be held at the gate).
    entered: usize,
}

/// A sled backend whose syncs of staged commits wait at a gate and can be made to fail.
struct Gated {
    inner: SledBackend,
    gate: Mutex<Gate>,
    moved: Condvar,
}

impl Gated {
    fn new() -> Self {
        Gated {
            inner: SledBackend::temporary().expect("sled"),
            gate: Mutex::new(Gate { open: true, ..Gate::default() }),
            moved: Condvar::new(),
        }
    }

    fn set(&self, f: impl FnOnce(&mut Gate)) {
        f(&mut self.gate.lock().unwrap());
        self.moved.notify_all();
    }

    /// Waits (bounded) until `until` holds of the gate.
    fn wait(&self, what: &str, until: impl Fn(&Gate) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut g = self.gate.lock().unwrap();
        while !until(&g) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "timed out waiting for {what}");
            g = self.moved.wait_timeout(g, left).unwrap().0;
        }
    }

    fn staged(&self) -> usize {
        self.gate.lock().unwrap().staged
    }
}

impl Backend for Gated {
    fn stores(&self) -> earshot_store::kernel::Result<Vec<String>> {
        self.inner.stores()
    }
    fn load(&self, store: &str) -> earshot_store::kernel::Result<Vec<Record>> {
        self.inner.load(store)
    }
    fn commit(&self, store: &str, ops: Vec<Op>) -> earshot_store::kernel::Result<()> {
        self.inner.commit(store, ops)
    }
    fn pipelines(&self) -> bool {
        true
    }
    fn stage(&self, store: &str, ops: Vec<Op>, unsynced: Option<Ticket>) -> earshot_store::kernel::Result<Ticket> {
        let t = self.inner.stage(store, ops, unsynced)?;
        self.set(|g| g.staged += 1);
        Ok(t)
    }
    fn make_durable(&self, ticket: Ticket) -> earshot_store::kernel::Result<()> {
        self.set(|g| g.entered += 1);
        self.wait("the gate to open", |g| g.open);
        let fail = std::mem::take(&mut self.gate.lock().unwrap().fail_next);
        if fail {
            return Err(KernelError::StorageUnavailable(
                "injected: a sync failed; the write's outcome is unknown".into(),
            ));
        }
        self.inner.make_durable(ticket)
    }
    fn get(&self, store: &str, key: &[u8]) -> earshot_store::kernel::Result<Option<Vec<u8>>> {
        self.inner.get(store, key)
    }
    fn scan(&self, store: &str, from: &[u8], to: &[u8], limit: usize) -> earshot_store::kernel::Result<Vec<Record>> {
        self.inner.scan(store, from, to, limit)
    }
}

fn item(id: &str) -> Command {
    item_saying(id, &format!("content of {id}"))
}

fn item_saying(id: &str, content: &str) -> Command {
    Command::CreateItem(NewItem {
        subjects: Vec::new(),
        id: Some(id.into()),
        owner: "o".into(),
        content: Some(content.into()),
        attributes: None,
        origin: OriginInput::Keyword(OriginKeyword::OwnerPrivate),
        author: None,
        embedding: None,
        embedding_metric: None,
    })
}

/// A store `s` with its owner, on a gated backend; answers the revision it is at.
fn store() -> (Arc<Gated>, Earshot, u64) {
    let backend = Arc::new(Gated::new());
    let e = Earshot::open_with(backend.clone(), Arc::new(ManualClock::new(earshot_tests::T0_MS)), Config::default())
        .expect("open");
    e.create_store("s", None).expect("store");
    let h = e.store("s").expect("handle");
    h.write(Command::CreateParticipant(NewParticipant { id: "o".into(), kind: ParticipantKind::Person, name: None }))
        .expect("participant");
    let rev = h.latest().revision();
    (backend, e, rev)
}

/// Long enough for a thread that is not held to have finished.
const SETTLE: Duration = Duration::from_millis(100);

#[test]
fn the_next_group_is_staged_while_one_syncs_and_nothing_is_seen_or_answered_before_it_is_durable() {
    let (backend, e, rev) = store();
    let h = e.store("s").expect("handle");
    backend.set(|g| g.open = false);
    let before = backend.staged();
    std::thread::scope(|scope| {
        let a = scope.spawn(|| h.write(item("a")));
        backend.wait("a's sync to begin", |g| g.entered >= 1 && g.staged > before);
        let b = scope.spawn(|| h.write(item("b")));
        // Staged while a's sync is held at the gate: the writer did not wait for the disk.
        backend.wait("b to be staged while a syncs", |g| g.staged > before + 1);
        // A refusal decided on the staged state ("a" exists there) waits behind it too.
        let again = scope.spawn(|| h.write(item_saying("a", "something else")));
        let export = scope.spawn(|| e.export("s").map(|x| x.header().revision));
        std::thread::sleep(SETTLE);
        for (name, t) in [("a", a.is_finished()), ("b", b.is_finished()), ("the refusal", again.is_finished())] {
            assert!(!t, "{name} was answered before its group was durable");
        }
        assert!(!export.is_finished(), "an export began on records not yet durable");
        assert_eq!(h.latest().revision(), rev, "nothing is published before it is durable");
        assert!(h.changes_after(rev, 10).expect("log").is_empty(), "the watch log shows only published revisions");

        backend.set(|g| g.open = true);
        assert_eq!(a.join().unwrap().expect("a").revision, rev + 1);
        assert_eq!(b.join().unwrap().expect("b").revision, rev + 2);
        assert_eq!(again.join().unwrap().expect_err("a exists").code(), "item_exists");
        assert!(export.join().unwrap().expect("export") >= rev + 2);
    });
    assert_eq!(h.latest().revision(), rev + 2);
    assert_eq!(h.changes_after(rev, 10).expect("log").len(), 2);
    h.verify().expect("the index agrees with the records");
}

#[test]
fn a_group_that_fails_to_become_durable_fails_every_group_staged_after_it_and_the_store_reloads() {
    let (backend, e, rev) = store();
    let h = e.store("s").expect("handle");
    backend.set(|g| {
        g.open = false;
        g.fail_next = true;
    });
    let before = backend.staged();
    std::thread::scope(|scope| {
        let a = scope.spawn(|| h.write(item("a")));
        backend.wait("a's sync to begin", |g| g.entered >= 1 && g.staged > before);
        let b = scope.spawn(|| h.write(item("b")));
        backend.wait("b to be staged while a syncs", |g| g.staged > before + 1);
        let again = scope.spawn(|| h.write(item_saying("a", "something else")));
        std::thread::sleep(SETTLE);
        // a's sync fails; b's own sync would succeed, but b was decided on a's state.
        backend.set(|g| g.open = true);
        for (name, t) in [("a", a), ("b", b), ("the refusal decided on a", again)] {
            let err = t.join().unwrap().expect_err(name);
            assert_eq!(err.code(), "storage_unavailable", "{name}: {err}");
        }
    });
    assert_eq!(h.latest().revision(), rev, "a group that failed to become durable is never published");
    // The store rebuilt its state from the records before the next group. This backend's
    // failure lost nothing, so the records hold a and b (outcome unknown: here, written).
    let c = h.write(item("c")).expect("the store writes again");
    assert_eq!(c.revision, rev + 3);
    assert_eq!(h.latest().item_names(), vec!["a", "b", "c"]);
    h.verify().expect("the index agrees with the records");
}

#[test]
fn a_store_with_a_group_in_flight_is_not_evicted_and_shuts_down_only_after_answering_it() {
    let (backend, e, rev) = store();
    let h = e.store("s").expect("handle");
    backend.set(|g| g.open = false);
    let before = backend.staged();
    std::thread::scope(|scope| {
        let a = scope.spawn(|| h.write(item("a")));
        backend.wait("a's sync to begin", |g| g.entered >= 1 && g.staged > before);
        assert!(!e.evict("s"), "a store with a write in flight was evicted");
        let closing = scope.spawn(|| e.shutdown());
        std::thread::sleep(SETTLE);
        assert!(!closing.is_finished(), "the store shut down with a write in flight");
        backend.set(|g| g.open = true);
        assert_eq!(a.join().unwrap().expect("a").revision, rev + 1);
        closing.join().unwrap();
    });
}
