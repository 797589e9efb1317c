//! The settings of `earshot serve`: each one a flag, an environment variable and a key of the
//! TOML configuration file (tokens: the file only), resolved flag > environment > file >
//! default. `docs/configuration.md` lists them, and a test keeps it equal to `serve --help`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::parser::ValueSource;
use clap::ArgMatches;
use earshot_api::{ServerLimits, TokenConfig};
use earshot_store::kernel::backend::{DEFAULT_MIN_FREE_BYTES, DEFAULT_SLED_CACHE_BYTES};
use earshot_store::Config;
use serde::Deserialize;

/// How log lines are written (to stderr).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line (for log shippers).
    Json,
}

/// The default log filter (`RUST_LOG` syntax).
pub const DEFAULT_LOG_FILTER: &str = "info,sled=warn,tantivy=warn";

/// The default log filter of `earshot validate`, whose output is its summary: warnings only.
pub const QUIET_LOG_FILTER: &str = "warn";

/// The flags of `earshot serve`. Defaults shown by `--help` apply only when neither the flag,
/// its environment variable nor the configuration file sets the value.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// TOML configuration file: any key below, and the `[[tokens]]`.
    #[arg(long, env = "EARSHOT_CONFIG")]
    pub config: Option<PathBuf>,
    /// Address to listen on. Without tokens only loopback addresses are allowed.
    #[arg(long, env = "EARSHOT_BIND", default_value = "127.0.0.1:7878")]
    pub bind: SocketAddr,
    /// Data directory of the embedded store (created if missing).
    #[arg(long, env = "EARSHOT_DATA", default_value = "earshot-data")]
    pub data: PathBuf,
    /// Records in PostgreSQL instead: a `postgres://` URL, optionally with
    /// `earshot_prefix=<table prefix>` (README, "Running on PostgreSQL").
    #[arg(long, env = "EARSHOT_DATASTORE")]
    pub datastore: Option<String>,
    /// Seconds past revisions stay readable with `at_exact`.
    #[arg(long, env = "EARSHOT_RETENTION_SECONDS", default_value_t = Config::default().retention_window.as_secs())]
    pub retention_seconds: u64,
    /// Most milliseconds an `at_least` read waits for its revision.
    #[arg(long, env = "EARSHOT_CONSISTENCY_WAIT_MS", default_value_t = millis(Config::default().consistency_wait))]
    pub consistency_wait_ms: u64,
    /// Over PostgreSQL, how often the replica's one follower asks which stores other replicas
    /// changed (one query for all stores; 0: never); between polls it listens for commits.
    #[arg(long, env = "EARSHOT_FOLLOW_INTERVAL_MS", default_value_t = millis(Config::default().follow_interval))]
    pub follow_interval_ms: u64,
    /// Over PostgreSQL, how long a store may trail the datastore's head (the age of the oldest
    /// revision seen there and not applied here), or go without a poll, before `/readyz`
    /// reports this replica behind (503 `degraded`); it is ready again once caught up.
    #[arg(long, env = "EARSHOT_READY_MAX_LAG_MS", default_value_t = millis(Config::default().ready_max_lag))]
    pub ready_max_lag_ms: u64,
    /// Revisions the revision log keeps for followers and watch streams (at least 1).
    #[arg(long, env = "EARSHOT_LOG_RETENTION", default_value_t = Config::default().log_retention)]
    pub log_retention: u64,
    /// Start no store at start-up; each starts on its first use (replicas that hold only the
    /// stores routed to them).
    #[arg(long, env = "EARSHOT_LAZY_STORES", default_value_t = false)]
    pub lazy_stores: bool,
    /// Most stores kept loaded in memory (0: no cap). Above it the least recently used, idle
    /// for a few seconds, are evicted once a second and load again on their next use.
    #[arg(long, env = "EARSHOT_MAX_LOADED_STORES", default_value_t = Config::default().max_loaded_stores)]
    pub max_loaded_stores: usize,
    /// Seconds after which an unused store is evicted from memory whatever the cap (0: never).
    #[arg(long, env = "EARSHOT_IDLE_STORE_SECONDS", default_value_t = Config::default().idle_store_after.as_secs())]
    pub idle_store_seconds: u64,
    /// Threads of the writer pool that runs every store's writer (at least 1).
    #[arg(long, env = "EARSHOT_WRITER_THREADS", default_value_t = Config::default().writer_threads)]
    pub writer_threads: usize,
    /// On SIGTERM or ctrl-c, milliseconds `/readyz` answers 503 `draining` while requests are
    /// still served, so a load balancer stops routing here before the listener closes.
    #[arg(long, env = "EARSHOT_DRAIN_DELAY_MS", default_value_t = 0)]
    pub drain_delay_ms: u64,
    /// MiB kept free on the data directory's filesystem: below it writes are refused with
    /// `507 insufficient_storage` (the embedded store only).
    #[arg(long, env = "EARSHOT_MIN_FREE_MB", default_value_t = DEFAULT_MIN_FREE_BYTES / MIB)]
    pub min_free_mb: u64,
    /// MiB of sled's page cache (the embedded store only): pages of the records kept in memory
    /// beside the stores' projections, which answer every decision.
    #[arg(long, env = "EARSHOT_SLED_CACHE_MB", default_value_t = DEFAULT_SLED_CACHE_BYTES / MIB)]
    pub sled_cache_mb: u64,
    /// Back the allocator's memory with transparent huge pages: a cold decision over a large
    /// store (hundreds of thousands of items) reads through far fewer TLB misses, at the price
    /// of about 40 MB more for an idle server (docs/configuration.md, "Memory").
    #[arg(long, env = "EARSHOT_HUGE_PAGES", default_value_t = false)]
    pub huge_pages: bool,
    /// Most connections open at once (default: the descriptor limit less 128, at most 4096).
    #[arg(long, env = "EARSHOT_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// Most milliseconds to receive a request head, on a new connection or between requests on
    /// a keep-alive one (so also the idle timeout).
    #[arg(long, env = "EARSHOT_HEADER_READ_TIMEOUT_MS", default_value_t = millis(ServerLimits::default().header_read_timeout))]
    pub header_read_timeout_ms: u64,
    /// Most milliseconds one request may take before `503 request_timeout`.
    #[arg(long, env = "EARSHOT_REQUEST_TIMEOUT_MS", default_value_t = millis(ServerLimits::default().request_timeout))]
    pub request_timeout_ms: u64,
    /// Most milliseconds a store's export or import (not bounded by the request timeout) may go
    /// without moving a chunk: an import body that stops arriving answers `408 body_timeout`,
    /// an export whose client stops reading ends.
    #[arg(long, env = "EARSHOT_STREAM_IDLE_TIMEOUT_MS", default_value_t = millis(ServerLimits::default().stream_idle_timeout))]
    pub stream_idle_timeout_ms: u64,
    /// Log line format on stderr.
    #[arg(long, env = "EARSHOT_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Which log lines to keep, in `RUST_LOG` syntax (`info`, `earshot=debug,sled=warn`, …).
    #[arg(long, env = "RUST_LOG", default_value = DEFAULT_LOG_FILTER)]
    pub log_filter: String,
}

const MIB: u64 = 1024 * 1024;

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The configuration file. Every key is optional; flags and environment variables override it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub bind: Option<SocketAddr>,
    pub data: Option<PathBuf>,
    pub datastore: Option<String>,
    pub retention_seconds: Option<u64>,
    pub consistency_wait_ms: Option<u64>,
    pub follow_interval_ms: Option<u64>,
    pub ready_max_lag_ms: Option<u64>,
    pub log_retention: Option<u64>,
    pub lazy_stores: Option<bool>,
    pub max_loaded_stores: Option<usize>,
    pub idle_store_seconds: Option<u64>,
    pub writer_threads: Option<usize>,
    pub drain_delay_ms: Option<u64>,
    pub min_free_mb: Option<u64>,
    pub sled_cache_mb: Option<u64>,
    pub huge_pages: Option<bool>,
    pub max_connections: Option<usize>,
    pub header_read_timeout_ms: Option<u64>,
    pub request_timeout_ms: Option<u64>,
    pub stream_idle_timeout_ms: Option<u64>,
    pub log_format: Option<LogFormat>,
    pub log_filter: Option<String>,
    #[serde(default)]
    pub tokens: Vec<TokenConfig>,
}

impl FileConfig {
    /// Reads the file `--config` names, or nothing.
    pub fn load(path: Option<&std::path::Path>) -> anyhow::Result<Self> {
        match path {
            Some(path) => {
                let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
                toml::from_str(&text)
                    .map_err(|e| unquoted(&text, &e))
                    .with_context(|| format!("parsing {}", path.display()))
            }
            None => Ok(FileConfig::default()),
        }
    }
}

/// A configuration file that does not parse, said by the parser's message and the place,
/// never by quoting the line: the line may hold the datastore's password or a token's secret.
fn unquoted(text: &str, e: &toml::de::Error) -> anyhow::Error {
    let message = e.message().trim_end();
    let Some(before) = e.span().and_then(|s| text.get(..s.start)) else { return anyhow::anyhow!("{message}") };
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    anyhow::anyhow!("{message} (line {line}, column {column})")
}

/// Everything `serve` runs with, resolved.
#[derive(Debug)]
pub struct ServeConfig {
    pub bind: SocketAddr,
    pub data: PathBuf,
    pub datastore: Option<String>,
    pub store: Config,
    pub limits: ServerLimits,
    /// How long `/readyz` says `draining` before the listener closes on a signal.
    pub drain_delay: Duration,
    pub log_format: LogFormat,
    pub log_filter: String,
    pub tokens: Vec<TokenConfig>,
    /// Whether the allocator backs its memory with huge pages (`crate::allocator`).
    pub huge_pages: bool,
}

/// The flag's value unless it is only clap's default, then the file's, then that default.
fn pick<T>(matches: &ArgMatches, id: &str, flag: T, file: Option<T>) -> T {
    match (matches.value_source(id), file) {
        (Some(ValueSource::DefaultValue) | None, Some(f)) => f,
        _ => flag,
    }
}

impl ServeConfig {
    /// Resolves the flags (with `matches`, to tell a default from a value that was given)
    /// over the configuration file, and checks the server limits.
    pub fn resolve(args: ServeArgs, matches: &ArgMatches) -> anyhow::Result<Self> {
        let file = FileConfig::load(args.config.as_deref())?;
        let retention = pick(matches, "retention_seconds", args.retention_seconds, file.retention_seconds);
        let wait = pick(matches, "consistency_wait_ms", args.consistency_wait_ms, file.consistency_wait_ms);
        let follow = pick(matches, "follow_interval_ms", args.follow_interval_ms, file.follow_interval_ms);
        let min_free_mb = pick(matches, "min_free_mb", args.min_free_mb, file.min_free_mb);
        let sled_cache_mb = pick(matches, "sled_cache_mb", args.sled_cache_mb, file.sled_cache_mb);
        if sled_cache_mb == 0 {
            bail!("sled_cache_mb must be at least 1");
        }
        let max_lag = pick(matches, "ready_max_lag_ms", args.ready_max_lag_ms, file.ready_max_lag_ms);
        let log_retention = pick(matches, "log_retention", args.log_retention, file.log_retention);
        if log_retention == 0 {
            bail!("log_retention must be at least 1");
        }
        let lazy = pick(matches, "lazy_stores", args.lazy_stores, file.lazy_stores);
        let max_loaded = pick(matches, "max_loaded_stores", args.max_loaded_stores, file.max_loaded_stores);
        let idle_store = pick(matches, "idle_store_seconds", args.idle_store_seconds, file.idle_store_seconds);
        let writer_threads = pick(matches, "writer_threads", args.writer_threads, file.writer_threads);
        if writer_threads == 0 || writer_threads > 256 {
            bail!("writer_threads must be between 1 and 256");
        }
        let drain_delay = pick(matches, "drain_delay_ms", args.drain_delay_ms, file.drain_delay_ms);
        let huge_pages = pick(matches, "huge_pages", args.huge_pages, file.huge_pages);
        let store = Config {
            min_free_bytes: min_free_mb.saturating_mul(MIB),
            sled_cache_bytes: sled_cache_mb.saturating_mul(MIB),
            retention_window: Duration::from_secs(retention),
            consistency_wait: Duration::from_millis(wait),
            follow_interval: Duration::from_millis(follow),
            ready_max_lag: Duration::from_millis(max_lag),
            log_retention,
            load_on_first_use: lazy,
            max_loaded_stores: max_loaded,
            idle_store_after: Duration::from_secs(idle_store),
            writer_threads,
            ..Config::default()
        };
        let mut limits = ServerLimits::default();
        if let Some(n) = args.max_connections.or(file.max_connections) {
            limits.max_connections = n;
        }
        limits.header_read_timeout = Duration::from_millis(pick(
            matches,
            "header_read_timeout_ms",
            args.header_read_timeout_ms,
            file.header_read_timeout_ms,
        ));
        limits.request_timeout = Duration::from_millis(pick(
            matches,
            "request_timeout_ms",
            args.request_timeout_ms,
            file.request_timeout_ms,
        ));
        limits.stream_idle_timeout = Duration::from_millis(pick(
            matches,
            "stream_idle_timeout_ms",
            args.stream_idle_timeout_ms,
            file.stream_idle_timeout_ms,
        ));
        limits.validate().map_err(anyhow::Error::msg).context("checking the server limits of the configuration")?;
        // An `at_least` read that waits its full time must still be answered with its own error.
        if limits.request_timeout <= store.consistency_wait {
            bail!(
                "request_timeout_ms ({}) must be larger than consistency_wait_ms ({})",
                limits.request_timeout.as_millis(),
                store.consistency_wait.as_millis()
            );
        }
        Ok(ServeConfig {
            bind: pick(matches, "bind", args.bind, file.bind),
            data: pick(matches, "data", args.data, file.data),
            datastore: args.datastore.or(file.datastore),
            store,
            limits,
            drain_delay: Duration::from_millis(drain_delay),
            log_format: pick(matches, "log_format", args.log_format, file.log_format),
            log_filter: pick(matches, "log_filter", args.log_filter, file.log_filter),
            tokens: file.tokens,
            huge_pages,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;
    use clap::{Args, FromArgMatches};

    fn resolve(argv: &[&str]) -> ServeConfig {
        let matches = ServeArgs::augment_args(clap::Command::new("serve")).get_matches_from(argv);
        ServeConfig::resolve(ServeArgs::from_arg_matches(&matches).unwrap(), &matches).unwrap()
    }

    #[test]
    fn a_flag_beats_the_file_and_the_file_beats_a_default() {
        let path = std::env::temp_dir().join(format!("earshot-config-test-{}.toml", std::process::id()));
        std::fs::write(&path, "retention_seconds = 7\nrequest_timeout_ms = 9000\nlog_format = \"json\"\n").unwrap();
        let file = path.to_str().unwrap();
        let c = resolve(&["serve", "--config", file, "--request-timeout-ms", "8000"]);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(c.store.retention_window, Duration::from_secs(7), "the file over the default");
        assert_eq!(c.limits.request_timeout, Duration::from_millis(8000), "the flag over the file");
        assert_eq!(c.log_format, LogFormat::Json);
        assert_eq!(c.limits.header_read_timeout, ServerLimits::default().header_read_timeout, "the default");
        let c = resolve(&["serve"]);
        assert_eq!(c.store.retention_window, Config::default().retention_window);
        assert_eq!(c.log_format, LogFormat::Text);
    }

    /// A file that does not parse is refused by message and place, never by quoting its line:
    /// a datastore URL or a token written without quotes would be echoed whole.
    #[test]
    fn a_file_that_does_not_parse_is_not_quoted() {
        let path = std::env::temp_dir().join(format!("earshot-config-unquoted-{}.toml", std::process::id()));
        for text in [
            "bind = \"127.0.0.1:7878\"\ndatastore = postgres://u:hunter2-secret@db/earshot\n",
            "[[tokens]]\nname = \"ops\"\ntoken = hunter2-secret-0123456789\nscope = \"admin\"\n",
            "datastore = \"postgres://u:hunter2-secret@db/earshot\n",
        ] {
            std::fs::write(&path, text).unwrap();
            let e = format!("{:#}", FileConfig::load(Some(&path)).unwrap_err());
            assert!(e.contains("parsing") && e.contains("(line "), "{e}");
            assert!(!e.contains("hunter2"), "the file's line was quoted: {e}");
        }
        std::fs::remove_file(&path).unwrap();
    }
}
