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

// ---- the store crate's parts: one kernel, two domains, arrows one way -----------------------

/// Which part of `earshot-store` a file under its `src/` belongs to: `kernel`, `memory`,
/// `devices`, `common` (shared below both domains), or `None` for the rest of the crate root
/// (the composition of the parts, and `error`).
fn store_part(rel: &Path) -> Option<&'static str> {
    match rel.components().next()?.as_os_str().to_str()? {
        "kernel" => Some("kernel"),
        "memory" => Some("memory"),
        "devices" => Some("devices"),
        "common.rs" => Some("common"),
        "metrics.rs" => Some("metrics"),
        _ => None,
    }
}

/// What each part may name with a `crate::` path: the kernel only itself and the error type;
/// `common` itself and the error type; a domain itself, the kernel, the error type and `common`.
/// Anything else (the other domain, the composition at the crate root or its re-exports)
/// is an arrow the wrong way. `metrics` (the store's operational counters) is a leaf that names
/// nothing, so every part may record into it, the kernel included.
fn may_name(part: &str, root: &str) -> bool {
    match part {
        "metrics" => root == "metrics",
        "kernel" => matches!(root, "kernel" | "error" | "metrics"),
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
fn store_arrows_run_one_way_kernel_knows_no_domain_and_domains_not_each_other() {
    let src = repo_root().join("crates/earshot-store/src");
    // Guard against a vacuous pass (a renamed or missing part checks nothing).
    for part in ["kernel", "memory", "devices"] {
        let mut files = Vec::new();
        rust_files(&src.join(part), &mut files);
        assert!(!files.is_empty(), "crates/earshot-store/src/{part}/ holds no source: the layout changed");
    }
    let arrows = wrong_way_arrows(&src);
    let kernel: Vec<_> = arrows.iter().filter(|(f, _)| f.starts_with("kernel")).collect();
    assert!(kernel.is_empty(), "the kernel names what it must not (only `kernel`, `error` and `metrics`): {kernel:?}");
    let domains: Vec<_> = arrows.iter().filter(|(f, _)| !f.starts_with("kernel")).collect();
    assert!(
        domains.is_empty(),
        "a domain (or `common`, or the leaf `metrics`) names the other domain or the crate root (a \
         domain may name itself, `kernel`, `common`, `error` and `metrics`; `common` only `error` \
         and `metrics`; `metrics` nothing): {domains:?}"
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
    assert!(!may_name("kernel", "memory") && !may_name("kernel", "devices") && !may_name("kernel", "common"));
    assert!(!may_name("memory", "devices") && !may_name("devices", "memory") && !may_name("devices", "model"));
    assert!(may_name("devices", "kernel") && may_name("memory", "common") && may_name("kernel", "error"));
    assert!(!may_name("common", "memory") && !may_name("common", "devices") && !may_name("memory", "compose"));
}
