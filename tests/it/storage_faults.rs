//! Storage faults: a commit the backend refuses is reported to every write of its group, leaves
//! no trace in what readers see (not even in the watch log, when the records were written and
//! only their sync failed), and the store keeps working and agreeing with its records.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use earshot_store::model::{Command, NewItem, NewParticipant, OriginInput, OriginKeyword, ParticipantKind};
use earshot_store::{Backend, Config, Earshot, ManualClock, Op, SledBackend};

/// A sled backend whose next commits can be made to fail.
struct Flaky {
    inner: SledBackend,
    fail: AtomicBool,
    /// When failing: write the records first, as a sync that fails after sled applied the
    /// batch does (the write's outcome is unknown).
    fail_after_writing: AtomicBool,
}

impl Backend for Flaky {
    fn stores(&self) -> earshot_kernel::Result<Vec<String>> {
        self.inner.stores()
    }
    fn load(&self, store: &str) -> earshot_kernel::Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.inner.load(store)
    }
    fn commit(&self, store: &str, ops: Vec<Op>) -> earshot_kernel::Result<()> {
        if self.fail.load(Ordering::SeqCst) {
            if self.fail_after_writing.load(Ordering::SeqCst) {
                self.inner.commit(store, ops)?;
                return Err(earshot_kernel::KernelError::StorageUnavailable(
                    "injected: a sync failed; the write's outcome is unknown".into(),
                ));
            }
            return Err(earshot_kernel::KernelError::Storage("injected fault".into()));
        }
        self.inner.commit(store, ops)
    }
    fn get(&self, store: &str, key: &[u8]) -> earshot_kernel::Result<Option<Vec<u8>>> {
        self.inner.get(store, key)
    }
    fn scan(
        &self,
        store: &str,
        from: &[u8],
        to: &[u8],
        limit: usize,
    ) -> earshot_kernel::Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.inner.scan(store, from, to, limit)
    }
}

fn item(id: &str) -> Command {
    Command::CreateItem(NewItem {
        subjects: Vec::new(),
        id: Some(id.into()),
        owner: "o".into(),
        content: Some(format!("content of {id}")),
        attributes: None,
        origin: OriginInput::Keyword(OriginKeyword::OwnerPrivate),
        author: None,
        embedding: None,
        embedding_metric: None,
    })
}

/// A store `s` with its owner `o` over a `Flaky` backend that is not failing yet.
fn store_with_owner(fail_after_writing: bool) -> (Arc<Flaky>, Earshot) {
    let backend = Arc::new(Flaky {
        inner: SledBackend::temporary().expect("sled"),
        fail: AtomicBool::new(false),
        fail_after_writing: AtomicBool::new(fail_after_writing),
    });
    let e = Earshot::open_with(backend.clone(), Arc::new(ManualClock::new(earshot_tests::T0_MS)), Config::default())
        .expect("open");
    e.create_store("s", None).expect("store");
    e.store("s")
        .expect("handle")
        .write(Command::CreateParticipant(NewParticipant { id: "o".into(), kind: ParticipantKind::Person, name: None }))
        .expect("participant");
    (backend, e)
}

#[test]
fn a_refused_commit_is_reported_and_leaves_no_trace() {
    let (backend, e) = store_with_owner(false);
    let h = e.store("s").expect("handle");
    h.write(item("before")).expect("first item");
    let rev = h.latest().revision();

    backend.fail.store(true, Ordering::SeqCst);
    let err = h.write(item("lost")).expect_err("the commit fails");
    assert_eq!(err.code(), "storage_failure");
    assert_eq!(h.latest().revision(), rev, "a failed commit publishes nothing");
    assert!(h.latest().item_names().iter().all(|n| n != "lost"));

    backend.fail.store(false, Ordering::SeqCst);
    // The writer reloaded from the records: the failed item's id is free, and the index agrees.
    h.write(item("lost")).expect("the same write succeeds once storage is back");
    h.write(item("after")).expect("later writes succeed");
    assert_eq!(h.latest().revision(), rev + 2);
    assert_eq!(h.latest().item_names(), vec!["before", "lost", "after"]);
    h.verify().expect("index agrees with the records");
}

#[test]
fn a_commit_that_fails_after_writing_is_not_shown_to_watchers_until_the_store_takes_it_up() {
    let (backend, e) = store_with_owner(true);
    let h = e.store("s").expect("handle");
    let rev = h.latest().revision();

    backend.fail.store(true, Ordering::SeqCst);
    let err = h.write(item("unknown")).expect_err("the commit reports failure");
    assert_eq!(err.code(), "storage_unavailable");
    assert_eq!(h.latest().revision(), rev);
    // Its records (and log entry) are in the backend, but no reader saw that revision
    // published: the watch log stops at what is.
    assert!(backend.inner.get("s", &earshot_kernel::log::log_key(rev + 1)).expect("read").is_some());
    assert!(h.changes_after(rev, 10).expect("log").is_empty(), "the watch log showed an unpublished revision");

    backend.fail.store(false, Ordering::SeqCst);
    // The writer reloaded from the records, which hold the write (its outcome was unknown: here,
    // written); the next write publishes past it and the log shows both.
    h.write(item("next")).expect("the store writes again");
    assert_eq!(h.changes_after(rev, 10).expect("log").len(), 2);
    h.verify().expect("the index agrees with the records");
}
