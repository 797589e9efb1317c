//! Frees what writers let go of (past revisions pruned from retention) on a thread of its
//! own, so that dropping a revision's path-copied nodes is not on a writer's path.
//!
//! Why: every write publishes a revision that shares most of its state with the one before,
//! and the pruning of an old revision frees the nodes only it held. Done by the writer, that
//! was about a seventh of its time under 16 clients (BENCHMARKS.md, "Acknowledged writes as a
//! store grows"). Dropping on another thread changes nothing else: a revision is dropped only
//! after no reader can reach it through the writer any more, exactly as before, only later.
//!
//! The queue is bounded: when it is full (the thread falls behind), the writer drops the
//! revisions itself, as it always did, so memory never waits on an unbounded backlog.

use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Batches waiting to be dropped before writers drop their own.
const QUEUE: usize = 256;

type Garbage = Box<dyn Send>;

/// The thread that drops released values, shared by every writer of a runtime.
pub struct Reclaimer {
    tx: Mutex<Option<SyncSender<Garbage>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Reclaimer {
    /// Starts the thread.
    pub fn start() -> std::io::Result<Arc<Self>> {
        let (tx, rx) = mpsc::sync_channel::<Garbage>(QUEUE);
        let thread = std::thread::Builder::new().name("earshot-reclaim".into()).spawn(move || {
            // Each value is dropped as it arrives; the loop ends when every sender is gone.
            for garbage in rx {
                drop(garbage);
            }
        })?;
        Ok(Arc::new(Reclaimer { tx: Mutex::new(Some(tx)), thread: Mutex::new(Some(thread)) }))
    }

    /// Drops `garbage` on the reclaiming thread, or here when its queue is full or stopped.
    pub fn release<T: Send + 'static>(&self, garbage: T) {
        let refused = match lock(&self.tx).as_ref() {
            // `try_send` never waits, so holding the lock across it costs nothing.
            Some(tx) => match tx.try_send(Box::new(garbage)) {
                Ok(()) => None,
                Err(TrySendError::Full(g) | TrySendError::Disconnected(g)) => Some(g),
            },
            None => Some(Box::new(garbage) as Garbage),
        };
        // Dropped here, by the caller, as if there were no reclaimer (after the lock is let go).
        drop(refused);
    }

    /// Stops the thread once it has dropped everything queued; later releases drop in place.
    pub fn stop(&self) {
        drop(lock(&self.tx).take());
        if let Some(t) = lock(&self.thread).take() {
            let _ = t.join();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts its drops and the threads they happened on.
    struct Counted(Arc<AtomicUsize>, Arc<Mutex<Vec<String>>>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
            let name = std::thread::current().name().unwrap_or("").to_string();
            self.1.lock().unwrap().push(name);
        }
    }

    #[test]
    fn released_values_are_dropped_once_on_the_reclaiming_thread_or_in_place_after_stop() {
        let (drops, threads) = (Arc::new(AtomicUsize::new(0)), Arc::new(Mutex::new(Vec::new())));
        let r = Reclaimer::start().unwrap();
        for _ in 0..10 {
            r.release(vec![Counted(drops.clone(), threads.clone()), Counted(drops.clone(), threads.clone())]);
        }
        r.stop();
        assert_eq!(drops.load(Ordering::SeqCst), 20, "stop waits for everything queued");
        assert!(threads.lock().unwrap().iter().all(|t| t == "earshot-reclaim"), "{:?}", threads.lock().unwrap());
        // Stopped: a release drops at once, on the caller's thread.
        r.release(Counted(drops.clone(), threads.clone()));
        assert_eq!(drops.load(Ordering::SeqCst), 21);
        assert_ne!(threads.lock().unwrap().last().map(String::as_str), Some("earshot-reclaim"));
    }
}
