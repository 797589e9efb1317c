//! Test support: a backend on its own uniquely prefixed tables in the test database, dropped
//! afterwards, or a clear skip when no PostgreSQL is reachable.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::{PgBackend, PgOptions};

/// The database tests use: `EARSHOT_TEST_PG_URL`, else `postgres://root@127.0.0.1:5432/test`.
pub fn url() -> String {
    std::env::var("EARSHOT_TEST_PG_URL").unwrap_or_else(|_| "postgres://root@127.0.0.1:5432/test".into())
}

/// Tables of one test, dropped when the last handle goes.
pub struct Isolated {
    pub backend: Arc<PgBackend>,
    pub options: PgOptions,
}

impl Isolated {
    /// Another backend (its own pool) on the same tables, as a second replica would have.
    pub fn another(&self) -> crate::Result<PgBackend> {
        PgBackend::open(self.options.clone())
    }
}

impl Drop for Isolated {
    fn drop(&mut self) {
        if let Err(e) = self.backend.drop_tables() {
            eprintln!("could not drop test tables {:?}: {e}", self.backend.table_names());
        }
    }
}

/// A backend on fresh tables named after `tag`, or `None` (with a message on stderr) when the
/// test database cannot be reached. Set `EARSHOT_REQUIRE_PG=1` to make that a failure instead
/// (the `Err`).
pub fn isolated(tag: &str) -> Result<Option<Isolated>, String> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let tag: String = tag.chars().filter(|c| c.is_ascii_alphanumeric()).take(12).collect::<String>().to_lowercase();
    let mut options = PgOptions::new(url()).with_prefix(format!("t{}_{n}_{tag}_", std::process::id()));
    options.connect_timeout = Duration::from_secs(2);
    options.pool_size = 2;
    match PgBackend::open(options.clone()) {
        Ok(b) => Ok(Some(Isolated { backend: Arc::new(b), options })),
        Err(e) if e.is_unavailable() && std::env::var_os("EARSHOT_REQUIRE_PG").is_none() => {
            eprintln!("SKIPPED: PostgreSQL is not reachable at {} ({e}); set EARSHOT_TEST_PG_URL", url());
            Ok(None)
        }
        Err(e) => Err(format!("opening PostgreSQL at {}: {e}", url())),
    }
}
