//! Latency of a durable single-item commit through PostgreSQL, one client (no criterion: the
//! backend's commit alone, alternated between two configurations). Single-item revisioned
//! commits with the history of past values kept (the default, `history_revisions` 10,000) and
//! without it (`history_revisions = 0`), in alternating rounds of 250, 2,000 commits each; prints
//! each round's p50 and then p50, p90 and p99 of each. The floor, one row updated in a durable
//! transaction, is pgbench's (BENCHMARKS.md, "Any replica, any token").
//!
//! `cargo bench -p earshot-benches --bench pg_commit` (PostgreSQL at `EARSHOT_TEST_PG_URL`,
//! default `postgres://root@127.0.0.1:5432/test`; the tables are dropped afterwards).

use std::time::{Duration, Instant};

use earshot_store::kernel::backend::{meta_op, MetaRecord};
use earshot_store::{Backend, Op};

const ROUNDS: usize = 8;
const PER_ROUND: usize = 250;

fn meta(store: &str, revision: u64) -> Op {
    let m = MetaRecord {
        id: store.into(),
        name: None,
        revision,
        created_at_ms: 0,
        committed_at_ms: Some(1),
        incarnation: None,
    };
    meta_op(&m).expect("a meta record encodes")
}

fn put(k: &str, v: &str) -> Op {
    Op::Put(k.as_bytes().to_vec(), v.as_bytes().to_vec())
}

fn main() {
    let prefix = format!("bench_commit_{}_", std::process::id());
    let options = earshot_postgres::PgOptions::new(earshot_postgres::testing::url()).with_prefix(prefix);
    let with = earshot_postgres::PgBackend::open(options.clone()).expect("PostgreSQL opens");
    let mut without_history = options;
    without_history.history_revisions = 0;
    let without = earshot_postgres::PgBackend::open(without_history).expect("PostgreSQL opens");
    let backends: [(&str, &earshot_postgres::PgBackend); 2] = [("h", &with), ("n", &without)];
    for (s, b) in backends {
        b.commit(s, vec![meta(s, 1)]).expect("first commit");
    }
    let value = "x".repeat(300);
    let mut times: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    let mut next = [2u64, 2u64];
    for round in 0..ROUNDS {
        for (i, (s, b)) in backends.into_iter().enumerate() {
            let started = times[i].len();
            for _ in 0..PER_ROUND {
                let r = next[i];
                next[i] += 1;
                let ops = vec![put(&format!("i/{r}"), &value), put(&format!("a/{}", r % 7), &value), meta(s, r)];
                let t = Instant::now();
                b.commit(s, ops).expect("commit");
                times[i].push(t.elapsed());
            }
            let mut this_round = times[i][started..].to_vec();
            this_round.sort();
            println!("round {round} {s}: p50 {:?}", this_round[this_round.len() / 2]);
        }
    }
    for (name, t) in ["with history", "without history"].into_iter().zip(times.iter_mut()) {
        t.sort();
        let p = |q: f64| t[((t.len() as f64 - 1.0) * q) as usize];
        println!("{name}: {} commits, p50 {:?}, p90 {:?}, p99 {:?}", t.len(), p(0.5), p(0.9), p(0.99));
    }
    if let Err(e) = with.drop_tables() {
        eprintln!("could not drop the bench's tables: {e}");
    }
}
