//! Makes staged commits durable on a thread of its own (a pipelined commit, for a backend that
//! [`Backend::pipelines`]), so that a store's writer applies and stages its next group while the
//! group before it is synced, instead of waiting for the disk between groups.
//!
//! Why: a writer's group is a chain of work and waits: apply the commands, stage the batch, then
//! the log's write and `fdatasync`. Run as one chain per group, the disk's part idles the writer
//! and the writer's part idles the disk (BENCHMARKS.md, "What bounds them"). With the sync
//! here, the two overlap, and one sync covers every batch staged while the one before it ran.
//!
//! What does not change: a write is answered, and its revision published, only after the
//! backend said it is durable, and in the order the writer staged it (one thread runs every
//! completion, in the order they were queued). A failed sync is reported to every completion
//! it covers; the writer fails every group staged after it too (see `writer`).

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use crate::backend::{Backend, Ticket};
use crate::error::Result;

/// What to do once a staged commit is durable, or known not to be: answer and publish it.
pub type Completion = Box<dyn FnOnce(Result<()>) + Send>;

struct Queue {
    waiting: VecDeque<(Ticket, Completion)>,
    stopping: bool,
}

/// The thread that makes every store's staged commits durable, shared by a runtime's writers.
pub struct Syncer {
    backend: Arc<dyn Backend>,
    queue: Mutex<Queue>,
    ready: Condvar,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Syncer {
    /// Starts the thread for `backend`.
    pub fn start(backend: Arc<dyn Backend>) -> std::io::Result<Arc<Self>> {
        let syncer = Arc::new(Syncer {
            backend,
            queue: Mutex::new(Queue { waiting: VecDeque::new(), stopping: false }),
            ready: Condvar::new(),
            thread: Mutex::new(None),
        });
        let s = syncer.clone();
        let thread = std::thread::Builder::new().name("earshot-sync".into()).spawn(move || s.work())?;
        *lock(&syncer.thread) = Some(thread);
        Ok(syncer)
    }

    /// Queues `done` to run once `ticket` is durable (or its sync failed). Once stopped, the
    /// sync and `done` run here, on the caller's thread.
    pub fn submit(&self, ticket: Ticket, done: Completion) {
        let mut q = lock(&self.queue);
        if q.stopping {
            drop(q);
            done(self.backend.make_durable(ticket));
            return;
        }
        q.waiting.push_back((ticket, done));
        drop(q);
        self.ready.notify_one();
    }

    /// The thread: takes everything queued, makes it durable with one sync per database
    /// instance (the newest ticket covers those before it), then runs the completions in order.
    fn work(&self) {
        loop {
            let batch: Vec<(Ticket, Completion)> = {
                let mut q = lock(&self.queue);
                loop {
                    if !q.waiting.is_empty() {
                        break q.waiting.drain(..).collect();
                    }
                    if q.stopping {
                        return;
                    }
                    q = self.ready.wait(q).unwrap_or_else(|p| p.into_inner());
                }
            };
            let mut synced: Vec<(Ticket, Result<()>)> = Vec::new();
            for (ticket, _) in &batch {
                let newest = batch
                    .iter()
                    .map(|(t, _)| *t)
                    .filter(|t| t.instance == ticket.instance)
                    .max_by_key(|t| t.sequence)
                    .unwrap_or(*ticket);
                if !synced.iter().any(|(t, _)| *t == newest) {
                    synced.push((newest, self.backend.make_durable(newest)));
                }
            }
            for (ticket, done) in batch {
                let outcome = synced
                    .iter()
                    .find(|(t, _)| t.instance == ticket.instance)
                    .map_or_else(|| self.backend.make_durable(ticket), |(_, r)| r.clone());
                // A bug in one completion must not stop every store's syncs.
                if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| done(outcome))).is_err() {
                    tracing::error!("a write's completion panicked");
                }
            }
        }
    }

    /// Stops the thread once everything queued is done; later submissions sync in place.
    pub fn stop(&self) {
        lock(&self.queue).stopping = true;
        self.ready.notify_all();
        if let Some(t) = lock(&self.thread).take() {
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;
    use crate::backend::{MemoryBackend, Op, Record};
    use crate::error::KernelError;

    /// Records the tickets it is asked to make durable; fails those of instance 9.
    #[derive(Default)]
    struct Recording {
        inner: MemoryBackend,
        synced: Mutex<Vec<Ticket>>,
    }

    impl Backend for Recording {
        fn stores(&self) -> Result<Vec<String>> {
            self.inner.stores()
        }
        fn load(&self, store: &str) -> Result<Vec<Record>> {
            self.inner.load(store)
        }
        fn commit(&self, store: &str, ops: Vec<Op>) -> Result<()> {
            self.inner.commit(store, ops)
        }
        fn get(&self, store: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
            self.inner.get(store, key)
        }
        fn scan(&self, store: &str, from: &[u8], to: &[u8], limit: usize) -> Result<Vec<Record>> {
            self.inner.scan(store, from, to, limit)
        }
        fn make_durable(&self, ticket: Ticket) -> Result<()> {
            lock(&self.synced).push(ticket);
            if ticket.instance == 9 {
                return Err(KernelError::StorageUnavailable("injected".into()));
            }
            Ok(())
        }
    }

    #[test]
    fn completions_run_in_order_after_one_sync_per_instance_and_share_its_outcome() {
        let backend = Arc::new(Recording::default());
        let syncer = Syncer::start(backend.clone()).unwrap();
        let done = Arc::new(Mutex::new(Vec::new()));
        let tickets = [(1, 3), (1, 4), (9, 1), (1, 5), (9, 2)];
        // Queued together, under the queue's lock, so that the thread takes them as one batch.
        let mut queue = lock(&syncer.queue);
        for (instance, sequence) in tickets {
            let d = done.clone();
            queue.waiting.push_back((
                Ticket { instance, sequence },
                Box::new(move |r: Result<()>| lock(&d).push((instance, sequence, r.is_ok()))),
            ));
        }
        drop(queue);
        syncer.ready.notify_one();
        syncer.stop();
        assert_eq!(
            *lock(&done),
            vec![(1, 3, true), (1, 4, true), (9, 1, false), (1, 5, true), (9, 2, false)],
            "completions in queue order, each with its instance's outcome"
        );
        assert_eq!(
            *lock(&backend.synced),
            vec![Ticket { instance: 1, sequence: 5 }, Ticket { instance: 9, sequence: 2 }],
            "one sync per instance, of its newest ticket"
        );
        // Stopped: a submission syncs and completes on the caller's thread.
        let d = done.clone();
        syncer.submit(Ticket { instance: 1, sequence: 6 }, Box::new(move |r| lock(&d).push((1, 6, r.is_ok()))));
        assert_eq!(lock(&done).last(), Some(&(1, 6, true)));
    }
}
