//! Where the records live, chosen at start-up: the embedded sled directory (the default), or a
//! PostgreSQL database named by a `postgres://` URL (`--datastore`, `EARSHOT_DATASTORE`, or the
//! configuration's `datastore`).
//!
//! The URL may carry parameters of Earshot's own, removed before the URL reaches the PostgreSQL
//! client: `earshot_prefix=<prefix>`, the prefix of the table names (default `earshot_`;
//! `[a-z_][a-z0-9_]*`), so that several deployments (or tests) share one database; and
//! `earshot_history=<revisions>`, how many revisions of past record values each store keeps
//! (default 10,000; 0 keeps none, and a replica then answers only revisions it held itself);
//! and `earshot_notify=off`, for a datastore without `LISTEN`/`NOTIFY` (CockroachDB,
//! YugabyteDB): commits then notify no one and followers poll only.
//!
//! Every message and log line that names the datastore shows it through
//! [`earshot_postgres::redacted`], its passwords masked.

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context};
use earshot_postgres::{redacted, PgBackend, PgOptions};
use earshot_store::{Backend, Config, Earshot, SystemClock};

/// The query parameter naming the table prefix.
pub const PREFIX_PARAM: &str = "earshot_prefix";

/// The query parameter naming how many revisions of history each store keeps.
pub const HISTORY_PARAM: &str = "earshot_history";

/// The query parameter that turns commit notifications off (`earshot_notify=off`, for a
/// datastore without `LISTEN`/`NOTIFY`: the follower then polls only).
pub const NOTIFY_PARAM: &str = "earshot_notify";

/// Whether `datastore` names PostgreSQL (the only datastore besides the embedded directory).
pub fn is_postgres(datastore: &str) -> bool {
    datastore.starts_with("postgres://") || datastore.starts_with("postgresql://")
}

/// The PostgreSQL options a datastore URL names: the URL without `earshot_prefix`, and the
/// prefix it gave.
pub fn pg_options(datastore: &str) -> anyhow::Result<PgOptions> {
    if !is_postgres(datastore) {
        bail!(
            "unsupported datastore `{}`: expected a postgres:// URL (omit --datastore for the embedded store in --data)",
            redacted(datastore)
        );
    }
    let (base, query) = match datastore.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (datastore, None),
    };
    let mut prefix = None;
    let mut history = None;
    let mut notify = true;
    let mut kept = Vec::new();
    for pair in query.into_iter().flat_map(|q| q.split('&')).filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some((PREFIX_PARAM, v)) => prefix = Some(v.to_string()),
            Some((HISTORY_PARAM, v)) => {
                history = Some(v.parse::<u64>().with_context(|| format!("`{HISTORY_PARAM}` must be a whole number"))?)
            }
            Some((NOTIFY_PARAM, v)) => {
                notify = match v {
                    "on" => true,
                    "off" => false,
                    _ => bail!("`{NOTIFY_PARAM}` must be `on` or `off`"),
                }
            }
            _ => kept.push(pair),
        }
    }
    let url = if kept.is_empty() { base.to_string() } else { format!("{base}?{}", kept.join("&")) };
    let mut options = PgOptions::new(url);
    options.notify = notify;
    if let Some(h) = history {
        options.history_revisions = h;
    }
    Ok(match prefix {
        Some(p) => options.with_prefix(p),
        None => options,
    })
}

/// Opens every store: over PostgreSQL when `datastore` is given, else the sled directory
/// `data` (created if missing).
pub fn open(datastore: Option<&str>, data: &Path, config: Config) -> anyhow::Result<Earshot> {
    match datastore {
        Some(url) => {
            let options = pg_options(url)?;
            let prefix = options.table_prefix.clone();
            let backend =
                PgBackend::open(options).with_context(|| format!("connecting to the datastore {}", redacted(url)))?;
            tracing::info!(datastore = %redacted(url), table_prefix = %prefix, "datastore: PostgreSQL");
            let backend: Arc<dyn Backend> = Arc::new(backend);
            Earshot::open_with(backend, Arc::new(SystemClock), config).context("opening the stores in PostgreSQL")
        }
        None => {
            std::fs::create_dir_all(data).with_context(|| format!("creating {}", data.display()))?;
            Earshot::open(data, config).context("opening the store")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_parameter_is_stripped() {
        let o = pg_options("postgres://root@127.0.0.1:5432/test?earshot_prefix=e2e_1_").unwrap();
        assert_eq!(o.url, "postgres://root@127.0.0.1:5432/test");
        assert_eq!(o.table_prefix, "e2e_1_");
        let o = pg_options("postgresql://u@h/db?sslmode=disable&earshot_prefix=x_&connect_timeout=3").unwrap();
        assert_eq!(o.url, "postgresql://u@h/db?sslmode=disable&connect_timeout=3");
        assert_eq!(o.table_prefix, "x_");
        assert_eq!(pg_options("postgres://u@h/db").unwrap().table_prefix, "earshot_");
        let o = pg_options("postgres://u@h/db?earshot_history=0&earshot_prefix=y_").unwrap();
        assert_eq!((o.url.as_str(), o.history_revisions, o.table_prefix.as_str()), ("postgres://u@h/db", 0, "y_"));
        assert_eq!(pg_options("postgres://u@h/db").unwrap().history_revisions, 10_000);
        assert!(pg_options("postgres://u@h/db?earshot_history=many").is_err());
        assert!(pg_options("postgres://u@h/db").unwrap().notify);
        assert!(!pg_options("postgres://u@h/db?earshot_notify=off").unwrap().notify);
        assert!(pg_options("postgres://u@h/db?earshot_notify=maybe").is_err());
        assert!(pg_options("/var/lib/earshot").is_err());
        assert_eq!(redacted("postgres://u:secret@h/db"), "postgres://u:***@h/db");
    }

    /// A refused datastore is named without its password, whatever the form: the key=value
    /// form (quoted or not), a URL of another scheme, a password in the query string.
    #[test]
    fn a_refused_datastore_is_named_without_its_password() {
        for given in [
            "host=db.internal password=hunter2-secret dbname=earshot",
            "host=db.internal password='hunter2 secret' dbname=earshot",
            "mysql://u:hunter2-secret@db.internal/earshot",
            "POSTGRES://u@db.internal/earshot?password=hunter2-secret",
        ] {
            let e = format!("{:#}", pg_options(given).unwrap_err());
            assert!(e.contains("unsupported datastore") && e.contains("db.internal"), "{e}");
            assert!(!e.contains("hunter2"), "the password was echoed: {e}");
        }
    }
}
