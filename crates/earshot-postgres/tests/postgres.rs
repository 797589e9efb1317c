//! The PostgreSQL backend against a real database: the `Backend` contract, racing writers
//! (exactly one wins, the other gets a conflict and applied nothing), the revision log, an
//! export's snapshot, an unreachable database, and the commit latency (ignored; run by hand). Each test works on its
//! own tables and skips with a message when PostgreSQL is not reachable.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "tests")]

use std::sync::{Arc, Barrier};
use std::time::Duration;

use earshot_postgres::testing::isolated;
use earshot_postgres::{PgBackend, PgError, PgOptions};
use earshot_store::durable::MetaRecord;
use earshot_store::{Backend, Op};

/// Fresh tables for this test, or return (skipping) when there is no database.
macro_rules! db {
    ($tag:expr) => {
        match isolated($tag).expect("PostgreSQL") {
            Some(db) => db,
            None => return,
        }
    };
}

fn meta(store: &str, revision: u64) -> Op {
    let m = MetaRecord {
        id: store.into(),
        name: None,
        revision,
        created_at_ms: 0,
        committed_at_ms: Some(1),
        incarnation: None,
    };
    Op::Put(b"m".to_vec(), serde_json::to_vec(&m).unwrap())
}

fn put(k: &str, v: &str) -> Op {
    Op::Put(k.as_bytes().to_vec(), v.as_bytes().to_vec())
}

fn del(k: &str) -> Op {
    Op::Del(k.as_bytes().to_vec())
}

/// `load` as strings, without the meta record.
fn records(b: &dyn Backend, store: &str) -> Vec<(String, String)> {
    b.load(store)
        .unwrap()
        .into_iter()
        .filter(|(k, _)| k.as_slice() != b"m")
        .map(|(k, v)| (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap()))
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn commits_are_read_back_exactly() {
    let db = db!("contract");
    let b: &dyn Backend = db.backend.as_ref();
    assert!(b.stores().unwrap().is_empty());
    assert!(b.load("s1").unwrap().is_empty());
    b.commit("s1", vec![put("p/b", "B"), put("c/x", "content"), put("t/y", "sealed"), put("c", "C"), meta("s1", 1)])
        .unwrap();
    // Key order, without content (`c/…`) and sealed contexts (`t/…`), which `get` reads.
    let loaded = b.load("s1").unwrap();
    let keys: Vec<&[u8]> = loaded.iter().map(|(k, _)| k.as_slice()).collect();
    assert_eq!(keys, vec![b"c".as_slice(), b"m", b"p/b"]);
    assert_eq!(b.get("s1", b"c/x").unwrap().as_deref(), Some(b"content".as_slice()));
    assert_eq!(b.get("s1", b"t/y").unwrap().as_deref(), Some(b"sealed".as_slice()));
    assert_eq!(b.get("s1", b"p/zz").unwrap(), None);

    // Deletes, overwrites, and a put and delete of the same key in one batch (last wins).
    b.commit("s1", vec![del("p/b"), put("p/a", "A"), put("p/c", "1"), del("c"), put("p/c", "2"), meta("s1", 2)])
        .unwrap();
    b.commit("s1", vec![put("p/d", "D"), del("p/d"), del("p/never"), meta("s1", 3)]).unwrap();
    assert_eq!(records(b, "s1"), pairs(&[("p/a", "A"), ("p/c", "2")]));
    let m: MetaRecord = serde_json::from_slice(&b.get("s1", b"m").unwrap().unwrap()).unwrap();
    assert_eq!(m.revision, 3);

    // Stores are isolated from each other.
    b.commit("s2", vec![put("p/a", "other"), meta("s2", 1)]).unwrap();
    assert_eq!(b.stores().unwrap(), vec!["s1".to_string(), "s2".to_string()]);
    assert_eq!(records(b, "s2"), pairs(&[("p/a", "other")]));
    assert_eq!(records(b, "s1"), pairs(&[("p/a", "A"), ("p/c", "2")]));
    assert_eq!(b.get("s2", b"c/x").unwrap(), None);

    // A commit without a meta record (a sealed context) is applied outside the revisions.
    b.commit("s1", vec![put("t/z", "audit")]).unwrap();
    assert_eq!(b.get("s1", b"t/z").unwrap().as_deref(), Some(b"audit".as_slice()));
    assert_eq!(db.backend.head("s1").unwrap().map(|h| h.revision), Some(3));
    assert_eq!(db.backend.head("nope").unwrap().map(|h| h.revision), None);

    // A group commit of two revisions: the head at the last, the records the net effect.
    b.commit("s1", vec![put("i/a", "1"), meta("s1", 4), put("i/a", "2"), put("i/b", "3"), meta("s1", 5)]).unwrap();
    assert_eq!(db.backend.head("s1").unwrap().map(|h| h.revision), Some(5));
    assert_eq!(records(b, "s1"), pairs(&[("i/a", "2"), ("i/b", "3"), ("p/a", "A"), ("p/c", "2")]));

    // Healthy: writable, no condition; the backend reopens on the same tables.
    assert!(b.writable().is_ok());
    assert_eq!(b.condition(), None);
    let again = db.another().unwrap();
    assert_eq!(again.load("s1").unwrap(), b.load("s1").unwrap());
}

#[test]
fn a_stale_or_repeated_revision_is_a_conflict_and_applies_nothing() {
    let db = db!("stale");
    let b = &db.backend;
    b.commit("s", vec![put("p/a", "1"), meta("s", 1)]).unwrap();
    b.commit("s", vec![put("p/a", "2"), meta("s", 2)]).unwrap();
    let before = b.load("s").unwrap();
    for (expected, ops) in [
        (1, vec![put("p/a", "stale"), meta("s", 2)]),
        (0, vec![put("p/a", "recreate"), meta("s", 1)]),
        (5, vec![put("p/a", "ahead"), meta("s", 6)]),
    ] {
        let e = b.commit_at("s", expected, ops).unwrap_err();
        assert!(e.is_conflict(), "{e}");
    }
    // Through the trait, the store sees its own conflict (409 `write_conflict`, retryable).
    let e = b.commit("s", vec![put("p/a", "stale"), meta("s", 2)]).unwrap_err();
    assert_eq!(earshot_store::StoreError::from(e.clone()).code(), "write_conflict", "{e}");
    assert!(e.to_string().contains("conflict"), "{e}");
    assert_eq!(b.load("s").unwrap(), before);
    assert_eq!(b.head("s").unwrap().map(|h| h.revision), Some(2));
    // A revisioned commit must name its revision.
    assert!(matches!(b.commit_at("s", 2, vec![put("p/a", "x")]), Err(PgError::Invalid(_))));
}

/// Two backends (two replicas, two pools) race from two threads for the same next revision,
/// round after round: exactly one wins each round, the other gets a conflict, and the records
/// are the winner's alone.
#[test]
fn racing_writers_never_both_commit_a_revision() {
    let db = db!("race");
    let replicas: [Arc<PgBackend>; 2] = [db.backend.clone(), Arc::new(db.another().unwrap())];
    const ROUNDS: u64 = 25;
    let mut wins = [0u32; 2];
    for round in 0..ROUNDS {
        // Round 0 races to create the store (no head yet), later rounds to advance it.
        let (expected, new) = (round, round + 1);
        let barrier = Arc::new(Barrier::new(2));
        let handles: Vec<_> = (0..2)
            .map(|who| {
                let (b, barrier) = (replicas[who].clone(), barrier.clone());
                std::thread::spawn(move || {
                    let ops = vec![
                        put("i/shared", &format!("{who}@{new}")),
                        put(&format!("i/{who}-{new}"), "mine"),
                        meta("s", new),
                    ];
                    barrier.wait();
                    b.commit_at("s", expected, ops)
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let winners: Vec<usize> = (0..2).filter(|w| results[*w].is_ok()).collect();
        assert_eq!(winners.len(), 1, "round {round}: {results:?}");
        let (winner, loser) = (winners[0], 1 - winners[0]);
        assert!(results[loser].as_ref().unwrap_err().is_conflict(), "round {round}: {results:?}");
        wins[winner] += 1;
        let b = &replicas[loser];
        assert_eq!(b.head("s").unwrap().map(|h| h.revision), Some(new));
        assert_eq!(b.get("s", b"i/shared").unwrap(), Some(format!("{winner}@{new}").into_bytes()));
        assert!(b.get("s", format!("i/{winner}-{new}").as_bytes()).unwrap().is_some());
        assert_eq!(b.get("s", format!("i/{loser}-{new}").as_bytes()).unwrap(), None);
    }
    assert_eq!(replicas[0].head("s").unwrap().map(|h| h.revision), Some(ROUNDS));
    // Only the winners' own keys exist: one per round.
    let own = records(replicas[0].as_ref(), "s").into_iter().filter(|(k, _)| k.contains('-')).count();
    assert_eq!(own as u64, ROUNDS);
    eprintln!("wins per replica: {wins:?}");
}

/// Range reads (the store's revision log reads its `l/` records this way): bytewise key order,
/// the end excluded, the limit honoured, other stores and other prefixes never included.
#[test]
fn scans_read_a_key_range_in_order() {
    let db = db!("scan");
    let b = &db.backend;
    let key = |r: u64| [b"l/".as_slice(), &r.to_be_bytes()].concat();
    let mut ops: Vec<Op> = (1..=40u64).map(|r| Op::Put(key(r), r.to_string().into_bytes())).collect();
    ops.push(put("i/x", "item"));
    ops.push(put("p/a", "participant"));
    b.commit("s", ops).unwrap();
    b.commit("other", vec![Op::Put(key(1), b"other".to_vec())]).unwrap();
    let revs = |rows: Vec<(Vec<u8>, Vec<u8>)>| {
        rows.into_iter().map(|(_, v)| String::from_utf8(v).unwrap().parse::<u64>().unwrap()).collect::<Vec<_>>()
    };
    assert_eq!(revs(b.scan("s", &key(1), &key(u64::MAX), 1000).unwrap()), (1..=40).collect::<Vec<_>>());
    assert_eq!(revs(b.scan("s", &key(11), &key(16), 1000).unwrap()), (11..16).collect::<Vec<_>>());
    assert_eq!(revs(b.scan("s", &key(11), &key(u64::MAX), 5).unwrap()), (11..16).collect::<Vec<_>>());
    assert!(b.scan("s", &key(41), &key(u64::MAX), 5).unwrap().is_empty());
    assert!(b.scan("s", &key(5), &key(5), 5).unwrap().is_empty());
    assert_eq!(b.scan("other", &key(0), &key(u64::MAX), 5).unwrap().len(), 1);
    // The projection's load leaves the log out.
    assert!(b.load("s").unwrap().iter().all(|(k, _)| !k.starts_with(b"l/")));
}

/// An export's view (`Backend::snapshot`) reads one instant of the database: commits made after
/// it opened, by this backend or by another replica's, change none of its reads, while fresh
/// reads see them; and the view holds no connection of the pool.
#[test]
fn a_snapshot_reads_the_instant_it_was_opened_whatever_any_replica_commits() {
    let db = db!("snapshot");
    let b: &dyn Backend = db.backend.as_ref();
    let other = db.another().unwrap();
    b.commit("s", vec![put("i/a", "1"), put("i/b", "1"), put("i/c", "1"), put("c/a", "content"), meta("s", 1)])
        .unwrap();
    let mut view = b.snapshot("s").unwrap().expect("PostgreSQL has snapshots");
    let at_open = |view: &mut Box<dyn earshot_store::RecordsView>| {
        let rows = view.scan(b"", &[0xff], 100).unwrap();
        let rows: Vec<(String, String)> = rows
            .into_iter()
            .filter(|(k, _)| k.as_slice() != b"m")
            .map(|(k, v)| (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap()))
            .collect();
        let meta: MetaRecord = serde_json::from_slice(&view.get(b"m").unwrap().unwrap()).unwrap();
        (rows, meta.revision, view.get(b"i/b").unwrap(), view.get(b"i/d").unwrap())
    };
    let expected =
        (pairs(&[("c/a", "content"), ("i/a", "1"), ("i/b", "1"), ("i/c", "1")]), 1, Some(b"1".to_vec()), None);
    assert_eq!(at_open(&mut view), expected);
    // Overwritten, deleted and created, by this replica and by another one.
    b.commit("s", vec![put("i/a", "2"), del("i/b"), meta("s", 2)]).unwrap();
    other.commit("s", vec![put("i/d", "new"), del("c/a"), put("i/c", "3"), meta("s", 3)]).unwrap();
    assert_eq!(at_open(&mut view), expected, "the view moved with later commits");
    // Page by page, as an export reads: the same rows.
    let first = view.scan(b"", &[0xff], 2).unwrap();
    assert_eq!(first.len(), 2);
    let mut from = first[1].0.clone();
    from.push(0);
    let rest = view.scan(&from, &[0xff], 100).unwrap();
    let keys: Vec<String> = first.iter().chain(&rest).map(|(k, _)| String::from_utf8(k.clone()).unwrap()).collect();
    assert_eq!(keys, ["c/a", "i/a", "i/b", "i/c", "m"]);
    // Fresh reads see every commit.
    assert_eq!(records(b, "s"), pairs(&[("i/a", "2"), ("i/c", "3"), ("i/d", "new")]));
    assert_eq!(b.get("s", b"c/a").unwrap(), None);
    // The view is not one of the pool's two connections: both stay usable while it is open.
    let held: Vec<_> = (0..3).map(|_| b.snapshot("s").unwrap().expect("view")).collect();
    b.commit("s", vec![put("i/e", "e"), meta("s", 4)]).unwrap();
    assert_eq!(b.get("s", b"i/e").unwrap(), Some(b"e".to_vec()));
    drop(held);
    drop(view);
    // A view opened now reads the newest instant.
    let mut now = b.snapshot("s").unwrap().expect("view");
    let meta: MetaRecord = serde_json::from_slice(&now.get(b"m").unwrap().unwrap()).unwrap();
    assert_eq!(meta.revision, 4);
}

#[test]
fn calls_from_inside_an_async_runtime_work() {
    let db = db!("async");
    let b = db.backend.clone();
    b.commit("s", vec![put("c/x", "content"), meta("s", 1)]).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let got = rt.block_on(async move { b.get("s", b"c/x") }).unwrap();
    assert_eq!(got.as_deref(), Some(b"content".as_slice()));
}

#[test]
fn an_unreachable_database_is_unavailable() {
    let mut options = PgOptions::new("postgres://root@127.0.0.1:1/test");
    options.connect_timeout = Duration::from_secs(1);
    let e = PgBackend::open(options).err().expect("nothing listens on port 1");
    assert!(e.is_unavailable(), "{e}");
    assert_eq!(earshot_store::StoreError::from(earshot_kernel::KernelError::from(e)).code(), "datastore_unavailable");
    for bad in ["no-dashes", "1digit", "UPPER", "semi;colon"] {
        let e = PgBackend::open(PgOptions::new("postgres://root@127.0.0.1:1/test").with_prefix(bad)).err();
        assert!(matches!(e, Some(PgError::Invalid(_))), "{bad}: {e:?}");
    }
}

/// The history of past values (issue 32): the records of every revision still kept can be
/// loaded back, exactly, whatever the later revisions put, overwrote or deleted, within one
/// group commit or across several; the on-demand records are never part of it; past the kept
/// revisions the backend says it cannot (never a mixed state), and a dropped store takes its
/// history with it.
#[test]
fn the_records_of_every_kept_revision_can_be_loaded_back() {
    let db = db!("history");
    let mut options = db.options.clone();
    options.history_revisions = 64;
    let b = PgBackend::open(options).unwrap();
    // Revision 1 alone; 2..=4 in one group (a key written twice and deleted within it);
    // then 5..=130 one at a time, each overwriting `k`.
    b.commit("s", vec![put("a", "1"), put("k", "0"), meta("s", 1)]).unwrap();
    b.commit(
        "s",
        vec![
            put("a", "2"),
            put("b", "1"),
            meta("s", 2),
            put("a", "3"),
            del("k"),
            meta("s", 3),
            put("k", "4"),
            meta("s", 4),
        ],
    )
    .unwrap();
    b.commit("s", vec![put("c/x", "content"), put("l/0005", "log"), put("k", "5"), meta("s", 5)]).unwrap();
    let at = |r: u64| -> Option<Vec<(String, String)>> {
        b.load_at("s", r).unwrap().map(|rows| {
            rows.into_iter()
                .filter(|(k, _)| k.as_slice() != b"m")
                .map(|(k, v)| (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap()))
                .collect()
        })
    };
    assert_eq!(at(1), Some(pairs(&[("a", "1"), ("k", "0")])));
    assert_eq!(at(2), Some(pairs(&[("a", "2"), ("b", "1"), ("k", "0")])));
    assert_eq!(at(3), Some(pairs(&[("a", "3"), ("b", "1")])));
    assert_eq!(at(4), Some(pairs(&[("a", "3"), ("b", "1"), ("k", "4")])));
    assert_eq!(at(5), Some(records(&b, "s")), "the newest revision is the records themselves");
    for r in 6..=130u64 {
        b.commit("s", vec![put("k", &r.to_string()), meta("s", r)]).unwrap();
    }
    // Kept: the last 64 revisions at least (pruned 64 at a time).
    for r in 130 - 63..=130u64 {
        assert_eq!(at(r), Some(pairs(&[("a", "3"), ("b", "1"), ("k", &r.to_string())])), "revision {r}");
    }
    assert_eq!(at(1), None, "pruned: the backend says so rather than answer another revision");
    b.drop_store("s").unwrap();
    b.commit("s", vec![put("z", "1"), meta("s", 1)]).unwrap();
    assert_eq!(at(1), Some(pairs(&[("z", "1")])), "a new store of the same id has none of the old history");
}
