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

// ---- the kernel crate, and the store crate's parts: two domains, arrows one way -------------

/// The `[dependencies]` table of a crate's manifest.
fn dependencies(krate: &str) -> String {
    let manifest =
        std::fs::read_to_string(repo_root().join("crates").join(krate).join("Cargo.toml")).expect("manifest");
    manifest.split("[dependencies]").nth(1).unwrap_or("").split("\n[").next().unwrap_or("").to_string()
}

/// The kernel is its own crate, so the compiler enforces that it names no domain; these are
/// the manifests' side of it: the kernel depends on no other Earshot crate, and the PostgreSQL
/// backend on the kernel alone (not on the store with its domains).
#[test]
fn the_kernel_is_a_crate_of_its_own_and_the_postgres_backend_needs_only_it() {
    let kernel = dependencies("earshot-kernel");
    assert!(!kernel.contains("earshot-"), "earshot-kernel depends on another Earshot crate:\n{kernel}");
    let postgres = dependencies("earshot-postgres");
    assert!(postgres.contains("earshot-kernel"), "earshot-postgres does not depend on the kernel:\n{postgres}");
    for other in ["earshot-store", "earshot-core", "earshot-api"] {
        assert!(!postgres.contains(other), "earshot-postgres depends on `{other}`:\n{postgres}");
    }
    assert!(
        !repo_root().join("crates/earshot-store/src/kernel").exists(),
        "a kernel module is back inside earshot-store"
    );
}

/// Which part of `earshot-store` a file under its `src/` belongs to: `memory`, `devices`,
/// `common` (shared below both domains), or `None` for the rest of the crate root (the
/// composition of the parts, and `error`).
fn store_part(rel: &Path) -> Option<&'static str> {
    match rel.components().next()?.as_os_str().to_str()? {
        "memory" => Some("memory"),
        "devices" => Some("devices"),
        "common.rs" => Some("common"),
        _ => None,
    }
}

/// What each part may name with a `crate::` path: `common` itself and the error type; a domain
/// itself, the kernel (the crate `earshot-kernel`, re-exported as `crate::kernel`, with its
/// `metrics`), the error type and `common`. Anything else (the other domain, the composition at
/// the crate root or its re-exports) is an arrow the wrong way.
fn may_name(part: &str, root: &str) -> bool {
    match part {
        "common" => matches!(root, "common" | "error" | "metrics"),
        _ => root == part || matches!(root, "kernel" | "error" | "common" | "metrics"),
    }
}

/// The first segment of every `crate::` path in `text` (each member of a `crate::{…}` group).
fn crate_roots(text: &str) -> Vec<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut out = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut start = 0usize;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.push(ident(group[start..i].trim()));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(ident(group[start..i].trim()));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(ident(rest));
        }
    }
    out.retain(|r| !r.is_empty());
    out
}

/// Every (file, root) pair where a part names what it may not, files relative to `src`.
fn wrong_way_arrows(src: &Path) -> std::collections::BTreeSet<(String, String)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut out = std::collections::BTreeSet::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap_or(&f).to_path_buf();
        let Some(part) = store_part(&rel) else { continue };
        let text = std::fs::read_to_string(&f).expect("read");
        // Comments may mention anything; only code is checked.
        let code: String =
            text.lines().filter(|l| !l.trim_start().starts_with("//")).map(|l| format!("{l}\n")).collect();
        for root in crate_roots(&code) {
            if !may_name(part, &root) {
                out.insert((rel.display().to_string(), root));
            }
        }
    }
    out
}

#[test]
fn store_arrows_run_one_way_domains_know_not_each_other() {
    let src = repo_root().join("crates/earshot-store/src");
    // Guard against a vacuous pass (a renamed or missing part checks nothing).
    for part in ["memory", "devices"] {
        let mut files = Vec::new();
        rust_files(&src.join(part), &mut files);
        assert!(!files.is_empty(), "crates/earshot-store/src/{part}/ holds no source: the layout changed");
    }
    let arrows = wrong_way_arrows(&src);
    assert!(
        arrows.is_empty(),
        "a domain (or `common`) names the other domain or the crate root (a domain may name \
         itself, `kernel`, `common`, `error` and `metrics`; `common` only `error` and `metrics`): {arrows:?}"
    );
}

#[test]
fn the_arrow_check_sees_plain_grouped_and_inline_paths() {
    assert_eq!(crate_roots("use crate::memory::apply::Dirty;"), ["memory"]);
    assert_eq!(
        crate_roots("use crate::{error::Result, devices::model::{A, B}, kernel};"),
        ["error", "devices", "kernel"]
    );
    assert_eq!(crate_roots("x: crate::devices::DeviceState,"), ["devices"]);
    assert!(!may_name("memory", "devices") && !may_name("devices", "memory") && !may_name("devices", "model"));
    assert!(may_name("devices", "kernel") && may_name("memory", "common") && may_name("memory", "error"));
    assert!(!may_name("common", "memory") && !may_name("common", "devices") && !may_name("memory", "compose"));
}
