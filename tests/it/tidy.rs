//! Repository hygiene: every Rust source file opens with a `//!` line saying what it owns, and
//! the pure core never depends on an async runtime or does I/O.

use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "target" || n.to_string_lossy().starts_with('.')) {
                continue;
            }
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_source_file_starts_with_a_module_doc_line() {
    let root = repo_root();
    let mut files = Vec::new();
    for dir in ["crates", "tests", "benches", "fuzz"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 20, "found only {} files; is the walk broken?", files.len());
    let missing: Vec<String> = files
        .iter()
        .filter(|f| !std::fs::read_to_string(f).unwrap_or_default().starts_with("//!"))
        .map(|f| f.strip_prefix(&root).unwrap_or(f).display().to_string())
        .collect();
    assert!(missing.is_empty(), "files without a leading `//!` line: {missing:?}");
}

#[test]
fn the_core_has_no_io_and_no_async_dependencies() {
    let root = repo_root().join("crates/earshot-core");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("core manifest");
    let deps = manifest.split("[dependencies]").nth(1).unwrap_or("").split("\n[").next().unwrap_or("");
    for forbidden in ["tokio", "async", "futures", "sled", "axum", "hyper", "reqwest", "std::fs"] {
        assert!(!deps.contains(forbidden), "earshot-core depends on `{forbidden}`");
    }
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        for forbidden in
            ["std::fs", "std::net", "std::thread", "std::time::SystemTime", "tokio", "async fn", "println!"]
        {
            assert!(!text.contains(forbidden), "{} uses `{forbidden}`", f.display());
        }
    }
}
