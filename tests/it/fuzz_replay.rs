//! Replays the checked-in fuzz corpus (`fuzz/corpus/<target>/`) and the saved crash inputs
//! (`fuzz/regressions/<target>/`) through the fuzz targets of `earshot_tests::fuzzing`, on stable,
//! on every CI run. The long coverage-guided runs use `cargo fuzz` (see TESTING.md).

use std::path::PathBuf;

use earshot_tests::fuzzing;

/// A fuzz target: takes any bytes, panics on a violated invariant.
type Target = fn(&[u8]);

/// Every fuzz target: its directory name and its function.
const TARGETS: [(&str, Target); 2] = [("http", fuzzing::http_request), ("schema", fuzzing::schema)];

fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("fuzz")
}

fn inputs(dir: &std::path::Path) -> Vec<(PathBuf, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let data = std::fs::read(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()));
            (p, data)
        })
        .collect()
}

#[test]
fn the_fuzz_corpus_replays_cleanly() {
    if std::env::var_os("EARSHOT_FUZZ_SEEDS").is_some() {
        let dir = fuzz_dir().join("corpus").join("http");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        for (n, seed) in fuzzing::http_seeds().iter().enumerate() {
            std::fs::write(dir.join(format!("seed-{n:02}")), seed).unwrap_or_else(|e| panic!("{e}"));
        }
        let dir = fuzz_dir().join("corpus").join("schema");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        for (n, seed) in fuzzing::schema_seeds().iter().enumerate() {
            std::fs::write(dir.join(format!("seed-{n:02}")), seed).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    for (name, target) in TARGETS {
        let corpus = inputs(&fuzz_dir().join("corpus").join(name));
        assert!(corpus.len() >= 10, "fuzz/corpus/{name} holds {} inputs; expected a seeded corpus", corpus.len());
        let regressions = inputs(&fuzz_dir().join("regressions").join(name));
        for (path, data) in corpus.iter().chain(&regressions) {
            let run = std::panic::catch_unwind(|| target(data));
            assert!(run.is_ok(), "fuzz target `{name}` fails on {}", path.display());
        }
    }
}

#[test]
fn seeds_decode_and_any_bytes_are_an_input() {
    // A seed per route decodes to a request for that route.
    for seed in fuzzing::http_seeds() {
        assert!(fuzzing::decode(&seed).is_some(), "{seed:?}");
    }
    // Any byte string is an input.
    for data in [&b""[..], b"\xff\xff\xff\xff", b"\x01\x15\x00 \n"] {
        fuzzing::http_request(data);
    }
}
