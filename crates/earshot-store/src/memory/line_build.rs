//! The item lines rebuilt off the writer: a build started from a snapshot, run on a thread of
//! its own, and used by every later snapshot whose line stamp is still the build's.
//!
//! Why: the item name table (`crate::memory::id_table`) is rebuilt whole when its summaries go
//! stale (the items folded into a new base, or an audience changed in place). Done in the write,
//! it was most of the writer's longest pauses (up to 1.5 s with the items' fold) while a store
//! grew to a million items by single writes (BENCHMARKS.md, "A store grown by single writes, and
//! the writer's pauses"). Now the writer starts
//! the build and goes on; until the build is done, lookups use the old lines (still right for
//! every name and id) and decide from records, never from a stale summary.
//!
//! What makes a finished build usable: it was made from a snapshot with the same
//! [`LineStamp`] (so the same item base and no in-place audience edit since), and covers every
//! item id below [`LineBuild::covers`]; a name added later is still in the snapshot's own
//! table, which lookups ask next. Summaries are used only as `line_summary_holds` says, as for
//! lines built in the write.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::memory::id_table::{IdTable, LineStamp};
use crate::memory::snapshot::MemorySnapshot;

/// Where a store's item lines are rebuilt when they go stale (`Config::item_lines_off_writer_from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineBuilds {
    /// In the write that made them stale: always, below this many items (a few milliseconds),
    /// and otherwise on a thread of their own.
    OffWriterFrom(usize),
    /// Started like a build off the writer, but run only when a test says so
    /// ([`LineBuild::run`]), so that tests choose when it finishes.
    #[cfg(test)]
    Deferred,
}

impl LineBuilds {
    /// The policy of `Config::item_lines_off_writer_from`.
    pub(crate) fn from_config(off_writer_from: usize) -> Self {
        #[cfg(test)]
        if off_writer_from == HELD_FOR_TESTS {
            return LineBuilds::Deferred;
        }
        LineBuilds::OffWriterFrom(off_writer_from)
    }
}

/// The `Config::item_lines_off_writer_from` of a store whose builds a test runs by hand.
#[cfg(test)]
pub(crate) const HELD_FOR_TESTS: usize = usize::MAX - 1;

impl Default for LineBuilds {
    fn default() -> Self {
        LineBuilds::OffWriterFrom(crate::kernel::DEFAULT_ITEM_LINES_OFF_WRITER_FROM)
    }
}

/// One rebuild of the item lines, shared by the snapshot that started it and every snapshot
/// made from that one. The default is no build (it serves no stamp).
pub(crate) struct LineBuild {
    /// The stamp of the snapshot it was made from; its lines hold under no other.
    stamp: LineStamp,
    /// The items of that snapshot: the lines hold every id below this, and no other.
    covers: u32,
    /// Set when the lines would be stale before they are done (a later build started), or
    /// when the build ended without lines; the writer then starts another.
    abandoned: AtomicBool,
    /// The snapshot to build from, until the build takes it.
    source: Mutex<Option<MemorySnapshot>>,
    lines: OnceLock<IdTable>,
}

impl Default for LineBuild {
    fn default() -> Self {
        LineBuild {
            stamp: LineStamp::default(),
            covers: 0,
            abandoned: AtomicBool::new(true),
            source: Mutex::new(None),
            lines: OnceLock::new(),
        }
    }
}

impl LineBuild {
    /// A build of `source`'s lines, not yet started.
    pub(crate) fn new(mut source: MemorySnapshot) -> Self {
        // The source's own build stays out of it: a build never holds a chain of builds.
        source.next_lines = Arc::default();
        LineBuild {
            stamp: source.line_stamp(),
            covers: u32::try_from(source.items.len()).unwrap_or(u32::MAX),
            abandoned: AtomicBool::new(false),
            source: Mutex::new(Some(source)),
            lines: OnceLock::new(),
        }
    }

    /// Builds the lines, unless the build was abandoned first or another call already took
    /// its source. Safe to call from any thread.
    pub(crate) fn run(&self) {
        /// Marks the build abandoned if it ends without lines, even by a panic, so that the
        /// writer starts another instead of waiting for it.
        struct Finish<'a>(&'a LineBuild);
        impl Drop for Finish<'_> {
            fn drop(&mut self) {
                if self.0.lines.get().is_none() {
                    self.0.abandon();
                }
            }
        }
        let Some(source) = self.source.lock().unwrap_or_else(|p| p.into_inner()).take() else { return };
        let _finish = Finish(self);
        let abandoned = || self.abandoned.load(Ordering::Relaxed);
        if let Some(lines) = source.build_item_lines_unless(&abandoned).filter(|_| !abandoned()) {
            let _ = self.lines.set(lines);
        }
    }

    /// Stops the build (its lines would be stale) or marks a build that ended without lines.
    pub(crate) fn abandon(&self) {
        self.abandoned.store(true, Ordering::Relaxed);
    }

    /// Whether this build may still give lines for `stamp` (done, or running and not abandoned).
    pub(crate) fn serves(&self, stamp: LineStamp) -> bool {
        self.stamp == stamp && (self.lines.get().is_some() || !self.abandoned.load(Ordering::Relaxed))
    }

    /// The finished lines, when they hold under `stamp`.
    pub(crate) fn ready(&self, stamp: LineStamp) -> Option<&IdTable> {
        self.lines.get().filter(|_| self.stamp == stamp)
    }

    /// Ids below this are in [`LineBuild::ready`]'s lines (or their overlay).
    pub(crate) fn covers(&self) -> u32 {
        self.covers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_serves_only_its_own_stamp_and_nothing_once_abandoned() {
        let source = MemorySnapshot::empty("s");
        let stamp = source.line_stamp();
        let other = LineStamp { items: stamp.items + 1, ..stamp };
        let build = LineBuild::new(source.clone());
        assert!(build.serves(stamp) && !build.serves(other) && build.ready(stamp).is_none());
        build.run();
        assert!(build.ready(stamp).is_some() && build.ready(other).is_none());
        assert!(build.serves(stamp), "a finished build still serves its stamp");
        // Run twice: the second run has no source and changes nothing.
        build.run();
        assert!(build.ready(stamp).is_some());

        let stale = LineBuild::new(source);
        stale.abandon();
        stale.run();
        assert!(stale.ready(stamp).is_none() && !stale.serves(stamp));
        assert!(!LineBuild::default().serves(LineStamp::default()), "no build serves anything");
    }
}
