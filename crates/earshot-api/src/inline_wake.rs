//! A connection task's future, re-polled at once when it wakes itself while being polled,
//! instead of going back through the runtime's scheduler.
//!
//! Why: hyper 1.12 wakes the connection task once for every request whose body is read. The
//! dispatcher registers its waker on the body channel before it hands the body over; when the
//! handler takes the body, the channel wakes that waker, although the dispatcher has by then
//! dropped its end (`hyper::body::chan`, `Receiver::poll_next`). The waker is the connection
//! task's own and the task is running, so tokio reschedules it as a yield once the poll
//! returns, and a yield also wakes an idle worker thread to come and look: the task is polled
//! 1.6 times per check instead of once, and a check costs more context switches than a
//! `/healthz` request (BENCHMARKS.md, "Over HTTP: checks next to `/healthz`, and writes").
//!
//! [`InlineSelfWakes`] gives the inner future its own waker. A wake that arrives while the
//! inner future is being polled (from itself, or from another thread at that moment) is noted,
//! and the inner future is polled again as soon as it returns `Pending`, up to
//! [`MAX_INLINE_POLLS`] times per poll; after that the task yields to the scheduler as before,
//! so a future that keeps waking itself (tokio's cooperative budget does that, on purpose)
//! still lets other tasks run. A wake at any other time goes to the task's waker, as without
//! the wrapper. No wake is lost: the state moves by compare-and-swap, so a wake either lands
//! while the poll is in progress (and is seen when it ends) or after (and wakes the task).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;

/// Most polls of the inner future in one poll of the task: the first, then one more each time
/// a wake arrived during the one before.
pub(crate) const MAX_INLINE_POLLS: usize = 4;

/// Not being polled: a wake goes to the task.
const IDLE: u8 = 0;
/// Being polled, not woken since the poll began.
const POLLING: u8 = 1;
/// Being polled, and woken since the poll began: poll again when it ends.
const WOKEN: u8 = 2;

/// See the module documentation.
pub(crate) struct InlineSelfWakes<F> {
    inner: Pin<Box<F>>,
    shared: Arc<Shared>,
    /// The waker the inner future sees: the same one every poll, so that what it registers
    /// with (tokio's I/O driver, hyper's channels) need not clone a new one each time.
    waker: Waker,
}

struct Shared {
    state: AtomicU8,
    /// The task's waker, registered at the start of every poll.
    task: AtomicWaker,
}

impl Wake for Shared {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            match state {
                IDLE => return self.task.wake(),
                WOKEN => return,
                _ => match self.state.compare_exchange_weak(state, WOKEN, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => return,
                    Err(now) => state = now,
                },
            }
        }
    }
}

impl<F: Future> InlineSelfWakes<F> {
    pub(crate) fn new(inner: F) -> Self {
        let shared = Arc::new(Shared { state: AtomicU8::new(IDLE), task: AtomicWaker::new() });
        InlineSelfWakes { inner: Box::pin(inner), waker: Waker::from(shared.clone()), shared }
    }

    /// The wrapped future, for calls it takes pinned (hyper's `graceful_shutdown`).
    pub(crate) fn inner(&mut self) -> Pin<&mut F> {
        self.inner.as_mut()
    }
}

impl<F: Future> Future for InlineSelfWakes<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        // Registered before the state says "not polling", so a wake after that finds it.
        this.shared.task.register(cx.waker());
        let mut inner_cx = Context::from_waker(&this.waker);
        for _ in 0..MAX_INLINE_POLLS {
            this.shared.state.store(POLLING, Ordering::Release);
            if let Poll::Ready(out) = this.inner.as_mut().poll(&mut inner_cx) {
                this.shared.state.store(IDLE, Ordering::Release);
                return Poll::Ready(out);
            }
            if this.shared.state.compare_exchange(POLLING, IDLE, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                return Poll::Pending;
            }
            // Woken during the poll: poll again now.
        }
        // Still waking itself: yield to the scheduler, as the wake asked without the wrapper.
        this.shared.state.store(IDLE, Ordering::Release);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::sync::Mutex;

    use super::*;

    /// A task waker that counts its wakes.
    #[derive(Default)]
    struct Counting(AtomicUsize);

    impl Wake for Counting {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn task() -> (Arc<Counting>, Waker) {
        let c = Arc::new(Counting::default());
        (c.clone(), Waker::from(c))
    }

    /// Wakes itself on each of its first `self_wakes` polls, then is ready.
    struct WakesItself {
        self_wakes: usize,
        polls: Arc<AtomicUsize>,
    }

    impl Future for WakesItself {
        type Output = &'static str;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<&'static str> {
            self.polls.fetch_add(1, Ordering::SeqCst);
            if self.self_wakes == 0 {
                return Poll::Ready("done");
            }
            self.self_wakes -= 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    fn poll_once<F: Future>(f: &mut InlineSelfWakes<F>, waker: &Waker) -> Poll<F::Output> {
        Pin::new(f).poll(&mut Context::from_waker(waker))
    }

    #[test]
    fn a_wake_during_the_poll_is_a_poll_at_once_not_a_trip_through_the_scheduler() {
        let (woken, waker) = task();
        let polls = Arc::new(AtomicUsize::new(0));
        let mut f = InlineSelfWakes::new(WakesItself { self_wakes: 1, polls: polls.clone() });
        assert_eq!(poll_once(&mut f, &waker), Poll::Ready("done"));
        assert_eq!(polls.load(Ordering::SeqCst), 2);
        assert_eq!(woken.0.load(Ordering::SeqCst), 0, "the task was not woken");
    }

    #[test]
    fn a_future_that_keeps_waking_itself_still_yields() {
        let (woken, waker) = task();
        let polls = Arc::new(AtomicUsize::new(0));
        let mut f = InlineSelfWakes::new(WakesItself { self_wakes: 100, polls: polls.clone() });
        assert_eq!(poll_once(&mut f, &waker), Poll::Pending);
        assert_eq!(polls.load(Ordering::SeqCst), MAX_INLINE_POLLS);
        assert_eq!(woken.0.load(Ordering::SeqCst), 1, "the task yields, woken once");
        // The next poll of the task carries on.
        assert_eq!(poll_once(&mut f, &waker), Poll::Pending);
        assert_eq!(polls.load(Ordering::SeqCst), 2 * MAX_INLINE_POLLS);
    }

    /// Pending until its stored waker is used from outside; keeps the waker it was given.
    struct WaitsOutside {
        waker: Arc<Mutex<Option<Waker>>>,
        ready: Arc<AtomicUsize>,
    }

    impl Future for WaitsOutside {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.ready.load(Ordering::SeqCst) > 0 {
                return Poll::Ready(());
            }
            let mut slot = self.waker.lock().expect("lock");
            if let Some(old) = slot.as_ref() {
                assert!(old.will_wake(cx.waker()), "the inner future sees the same waker every poll");
            }
            *slot = Some(cx.waker().clone());
            Poll::Pending
        }
    }

    /// A wrapped [`WaitsOutside`], polled once, and a thread that will make it ready and wake
    /// the waker it registered.
    fn waiting_with_a_waking_thread(
        waker: &Waker,
    ) -> (InlineSelfWakes<WaitsOutside>, impl FnOnce() -> std::thread::JoinHandle<()>) {
        let stored = Arc::new(Mutex::new(None::<Waker>));
        let ready = Arc::new(AtomicUsize::new(0));
        let mut f = InlineSelfWakes::new(WaitsOutside { waker: stored.clone(), ready: ready.clone() });
        assert_eq!(poll_once(&mut f, waker), Poll::Pending);
        let inner = stored.lock().expect("lock").clone().expect("registered");
        let start = move || {
            std::thread::spawn(move || {
                ready.store(1, Ordering::SeqCst);
                inner.wake();
            })
        };
        (f, start)
    }

    #[test]
    fn a_wake_after_the_poll_wakes_the_task_and_none_is_lost_across_threads() {
        for _ in 0..200 {
            let (woken, waker) = task();
            let (mut f, start) = waiting_with_a_waking_thread(&waker);
            assert_eq!(poll_once(&mut f, &waker), Poll::Pending);
            assert_eq!(woken.0.load(Ordering::SeqCst), 0);
            // Woken from another thread, racing with nothing: the task's waker hears it.
            start().join().expect("thread");
            assert_eq!(woken.0.load(Ordering::SeqCst), 1, "the task was woken");
            assert_eq!(poll_once(&mut f, &waker), Poll::Ready(()));
        }
    }

    #[test]
    fn wakes_racing_the_end_of_a_poll_are_never_lost() {
        // Another thread wakes the inner waker while the task polls it; each round, either
        // the poll sees the wake and polls again, or the task's waker is woken.
        for _ in 0..2_000 {
            let (woken, waker) = task();
            let (mut f, start) = waiting_with_a_waking_thread(&waker);
            let waking = start();
            let first = poll_once(&mut f, &waker);
            waking.join().expect("thread");
            if first.is_pending() {
                assert!(woken.0.load(Ordering::SeqCst) >= 1, "a wake was lost");
                assert_eq!(poll_once(&mut f, &waker), Poll::Ready(()));
            }
        }
    }
}
