//! The writer pool: a fixed number of threads that run every store's writer, so that a store
//! costs no thread. A store with work queues itself once ([`Pool::schedule`]); a worker runs
//! one group of its work and queues it again behind the others while more is waiting, so that
//! one busy store cannot starve the rest. A store is never run by two workers at once (the
//! writer's own `scheduled` flag, see `writer`), which keeps per-store order and group commit.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};

/// Work a pool runs: one store's writer.
pub trait Task: Send + Sync {
    /// Runs one slice of the task's work; answers whether more is waiting (the pool then
    /// queues the task again, behind the others).
    fn run(&self) -> bool;
    /// `run` panicked (a bug): the task puts itself back in a state from which it can run
    /// again, and answers whether more is waiting. The worker lives on.
    fn recover(&self) -> bool;
}

/// The queue the workers share.
struct Queue {
    tasks: VecDeque<Arc<dyn Task>>,
    stopping: bool,
}

/// A fixed set of worker threads over one queue of tasks.
pub struct Pool {
    queue: Mutex<Queue>,
    ready: Condvar,
    workers: Mutex<Vec<std::thread::JoinHandle<()>>>,
}

impl Pool {
    /// Starts `threads` workers (at least one).
    pub fn start(threads: usize) -> std::io::Result<Arc<Pool>> {
        let pool = Arc::new(Pool {
            queue: Mutex::new(Queue { tasks: VecDeque::new(), stopping: false }),
            ready: Condvar::new(),
            workers: Mutex::new(Vec::new()),
        });
        let mut workers = Vec::new();
        for n in 0..threads.max(1) {
            let p = pool.clone();
            workers.push(std::thread::Builder::new().name(format!("earshot-writer-{n}")).spawn(move || p.work())?);
        }
        *lock(&pool.workers) = workers;
        Ok(pool)
    }

    /// Queues `task` to run on a worker. The caller guarantees it is not queued already.
    pub fn schedule(&self, task: Arc<dyn Task>) {
        let mut q = lock(&self.queue);
        q.tasks.push_back(task);
        drop(q);
        self.ready.notify_one();
    }

    /// A worker: runs queued tasks until the pool stops.
    fn work(&self) {
        loop {
            let task = {
                let mut q = lock(&self.queue);
                loop {
                    if let Some(t) = q.tasks.pop_front() {
                        break t;
                    }
                    if q.stopping {
                        return;
                    }
                    q = self.ready.wait(q).unwrap_or_else(|p| p.into_inner());
                }
            };
            // A panic in one store's work must not take a worker (and every store's progress)
            // with it.
            let more = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task.run())) {
                Ok(more) => more,
                Err(_) => {
                    tracing::error!("a writer panicked; its store reloads before its next write");
                    task.recover()
                }
            };
            if more {
                self.schedule(task);
            }
        }
    }

    /// Stops the workers once the queue is empty, and waits for them. Tasks queued after this
    /// are run by whoever drains them (a writer's shutdown drains its own work).
    pub fn stop(&self) {
        lock(&self.queue).stopping = true;
        self.ready.notify_all();
        let workers = std::mem::take(&mut *lock(&self.workers));
        let here = std::thread::current().id();
        for w in workers {
            // A worker that drops the last handle of the process joins no one, itself included.
            if w.thread().id() != here {
                let _ = w.join();
            }
        }
    }

    /// Worker threads running.
    pub fn threads(&self) -> usize {
        lock(&self.workers).len()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    /// A task that counts its runs and asks for `more` runs beyond the first.
    struct Counter {
        runs: AtomicUsize,
        more: usize,
        running: AtomicBool,
    }

    impl Task for Counter {
        fn run(&self) -> bool {
            assert!(!self.running.swap(true, Ordering::SeqCst), "a task ran on two workers at once");
            let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
            self.running.store(false, Ordering::SeqCst);
            n <= self.more
        }
        fn recover(&self) -> bool {
            false
        }
    }

    #[test]
    fn every_task_runs_until_it_is_done_and_never_twice_at_once() {
        let pool = Pool::start(3).expect("pool");
        let tasks: Vec<Arc<Counter>> = (0..50)
            .map(|i| Arc::new(Counter { runs: AtomicUsize::new(0), more: i % 7, running: AtomicBool::new(false) }))
            .collect();
        for t in &tasks {
            pool.schedule(t.clone());
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while tasks.iter().any(|t| t.runs.load(Ordering::SeqCst) < t.more + 1) {
            assert!(std::time::Instant::now() < deadline, "tasks did not finish");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        pool.stop();
        assert_eq!(pool.threads(), 0);
        for t in &tasks {
            assert_eq!(t.runs.load(Ordering::SeqCst), t.more + 1);
        }
    }
}
