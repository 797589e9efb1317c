//! A sled data directory of the earlier layout (one tree per store, a watermark of each store's
//! revision) under this release: its first open moves it to one tree, and every store exports
//! byte for byte as it did and answers as it did.

use std::collections::BTreeMap;
use std::sync::Arc;

use earshot::validate::STORE;
use earshot_store::kernel::backend::{MetaRecord, META_KEY};
use earshot_store::kernel::sled_backend::{store_prefix, RECORDS_TREE};
use earshot_store::{Clock, Config, Earshot, ManualClock, SledBackend};
use earshot_tests::{TestApp, T0_MS};

use crate::scenarios::{fixture_files, parse};

/// sled lets go of its file lock from a background thread some time after its last handle
/// drops, later still on a loaded machine: reopening a directory just closed waits for it.
fn until_unlocked<T, E: std::fmt::Display>(mut open: impl FnMut() -> Result<T, E>) -> T {
    let started = std::time::Instant::now();
    loop {
        match open() {
            Ok(v) => return v,
            Err(e) if e.to_string().contains("lock") && started.elapsed() < std::time::Duration::from_secs(30) => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(e) => panic!("opening the data directory: {e}"),
        }
    }
}

fn export_of(e: &Earshot, store: &str) -> Vec<u8> {
    let mut out = Vec::new();
    e.export(store).expect("export opens").write_to(&mut out).expect("export runs");
    out
}

/// Rewrites the one-tree directory at `data` as the earlier layout wrote it.
fn as_the_earlier_layout(data: &std::path::Path) {
    let db = until_unlocked(|| sled::Config::new().path(data).open());
    let records = db.open_tree(RECORDS_TREE).expect("records");
    let mut marks = BTreeMap::new();
    let stores: Vec<String> = records
        .scan_prefix(b"s")
        .keys()
        .map(|k| String::from_utf8(k.expect("key")[1..].to_vec()).expect("utf-8"))
        .collect();
    for store in stores {
        let tree = db.open_tree(format!("store/{store}")).expect("old tree");
        let prefix = store_prefix(&store);
        for kv in records.scan_prefix(&prefix) {
            let (k, v) = kv.expect("record");
            tree.insert(&k[prefix.len()..], v).expect("insert");
        }
        let meta: MetaRecord = serde_json::from_slice(&tree.get(META_KEY).expect("get").expect("meta")).expect("meta");
        marks.insert(store, meta.revision);
    }
    db.drop_tree(RECORDS_TREE).expect("drop");
    db.flush().expect("flush");
    std::fs::write(data.join("earshot-watermark.json"), serde_json::to_vec(&marks).expect("json")).expect("watermark");
}

#[tokio::test]
async fn a_directory_of_the_earlier_layout_opens_with_every_store_as_it_was() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let clock = Arc::new(ManualClock::new(T0_MS));
    let open = || {
        let backend = until_unlocked(|| SledBackend::open(&data));
        Earshot::open_with(Arc::new(backend), clock.clone(), Config::default()).expect("open")
    };

    // Every fixture, played in a service of its own and imported here under an id of its own.
    let mut before = BTreeMap::new();
    {
        let e = open();
        for (i, f) in fixture_files().into_iter().enumerate() {
            let sc = parse(&std::fs::read_to_string(&f).expect("fixture")).expect("parses");
            let app = TestApp::new();
            assert!(earshot::validate::run(&app, &sc).await.failures.is_empty(), "{}", sc.name);
            clock.set(app.clock.now_ms());
            let exported = export_of(&app.earshot, STORE);
            let id = format!("f{i:02}");
            e.import_store(&id, &mut &exported[..]).expect("import");
            before.insert(id.clone(), export_of(&e, &id));
        }
        e.shutdown();
    }
    assert!(before.len() >= 10, "only {} fixtures", before.len());

    as_the_earlier_layout(&data);
    let e = open();
    assert_eq!(e.store_ids(), before.keys().cloned().collect::<Vec<_>>());
    for (id, exported) in &before {
        e.store(id).expect("store").verify().expect("its indexes agree with its records");
        assert!(export_of(&e, id) == *exported, "store {id} exports differently after the move");
    }
    e.shutdown();
    drop(e);

    let db = until_unlocked(|| sled::Config::new().path(&data).open());
    assert!(!db.tree_names().iter().any(|n| n.starts_with(b"store/")), "the old trees are dropped");
}
