//! The allocator's one setting that `serve` chooses: whether mimalloc commits its arena eagerly
//! and so backs it with transparent huge pages (`--huge-pages`).
//!
//! mimalloc reads its options from the environment once, when the process starts and before
//! `main`, so the only way for the server to choose its own default is to start itself again
//! with the option set: [`settle`] does that once, by `exec` (the same process id, arguments and
//! descriptors; nothing has been started yet when it runs). An operator who sets the option in
//! the environment decides instead, and no `exec` happens.
//!
//! Why the default is off: with eager commit, every thread that allocates at all makes at least
//! one 2 MiB page resident, so an idle, empty server is about 55 MB instead of about 14 MB, and
//! most servers hold small stores (docs/configuration.md, "Memory", has the figures). A server
//! that holds a large store turns it on: a cold decision there makes several dependent loads,
//! each cheaper through a huge page's TLB entry.

use std::ffi::OsString;

/// mimalloc's option (its own name): `0` commits the arena on demand, in pieces too small for
/// huge pages; `1` commits it at once and asks the kernel for huge pages on it; unset, mimalloc
/// commits eagerly on Linux.
pub const ARENA_EAGER_COMMIT: &str = "MIMALLOC_ARENA_EAGER_COMMIT";

/// What [`settle`] decided, for the start-up log line.
#[derive(Debug, PartialEq, Eq)]
pub enum Settled {
    /// The environment already set the option (the operator, or this process's own `exec`).
    AsConfigured(OsString),
    /// Huge pages asked for: mimalloc's default (eager on Linux) is kept.
    HugePages,
    /// The `exec` failed; the process goes on with mimalloc's default.
    ExecFailed(String),
}

/// The value of [`ARENA_EAGER_COMMIT`] that `--huge-pages` (or its absence) asks for, or `None`
/// when the environment already decides.
pub fn wanted(current: Option<&OsString>, huge_pages: bool) -> Option<&'static str> {
    match (current, huge_pages) {
        (Some(_), _) | (None, true) => None,
        (None, false) => Some("0"),
    }
}

/// Makes the allocator's setting what `huge_pages` asks for, starting the process again with
/// [`ARENA_EAGER_COMMIT`] set if it must; returns only when no `exec` was needed or it failed.
pub fn settle(huge_pages: bool) -> Settled {
    let current = std::env::var_os(ARENA_EAGER_COMMIT);
    let Some(value) = wanted(current.as_ref(), huge_pages) else {
        return match current {
            Some(v) => Settled::AsConfigured(v),
            None => Settled::HugePages,
        };
    };
    exec_with(value)
}

#[cfg(unix)]
fn exec_with(value: &str) -> Settled {
    use std::os::unix::process::CommandExt;
    let mut args = std::env::args_os();
    let arg0 = args.next();
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return Settled::ExecFailed(format!("the binary's path is unknown: {e}")),
    };
    let mut cmd = std::process::Command::new(exe);
    if let Some(arg0) = arg0 {
        cmd.arg0(arg0);
    }
    // `exec` returns only on failure.
    let e = cmd.args(args).env(ARENA_EAGER_COMMIT, value).exec();
    Settled::ExecFailed(e.to_string())
}

#[cfg(not(unix))]
fn exec_with(_value: &str) -> Settled {
    Settled::ExecFailed("starting the process again is supported on Unix only".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_decides_when_it_says_anything() {
        let set = OsString::from("1");
        assert_eq!(wanted(Some(&set), false), None);
        assert_eq!(wanted(Some(&set), true), None);
        assert_eq!(wanted(None, true), None);
        assert_eq!(wanted(None, false), Some("0"));
    }
}
