//! Owns the data-driven scenario tests: every `fixtures/*.yaml` through the one scenario runner
//! (`earshot::validate`, the library half of `earshot validate`; the format is documented in
//! `docs/validate.md`), over `TestApp`, and the tests that prove that the runner can fail. The
//! fault targets of `faults.rs`, `device_faults.rs` and `context_fault.rs` implement the
//! runner's [`Target`] and run through [`run_scenario_on`].

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

pub(crate) use earshot::validate::{parse as parse_scenario, Scenario, Target};
use earshot_tests::TestApp;

/// Runs one scenario in a fresh app; the failures, each naming the step and the response.
async fn run_scenario(sc: &Scenario) -> Vec<String> {
    let app = TestApp::new();
    run_scenario_on(&app, sc).await
}

/// Runs one scenario against any target (which must hold no store `s` yet); each failure as
/// ``scenario `name` step K (action): message``.
pub(crate) async fn run_scenario_on<T: Target>(target: &T, sc: &Scenario) -> Vec<String> {
    let report = earshot::validate::run(target, sc).await;
    report.failures.iter().map(|f| format!("scenario `{}` {f}", sc.name)).collect()
}

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("fixtures")
}

/// Every `fixtures/*.yaml`, sorted by file name.
pub(crate) fn fixture_files() -> Vec<PathBuf> {
    let dir = fixtures_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

pub(crate) fn parse(text: &str) -> Result<Scenario, String> {
    parse_scenario(text).map_err(|e| e.to_string())
}

#[tokio::test]
async fn every_fixture_scenario_holds() {
    let dir = fixtures_dir();
    let files = fixture_files();
    let mut report = String::new();
    let mut failed = Vec::new();
    let mut names = BTreeMap::new();
    for f in &files {
        let file = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("reading {}: {e}", f.display()));
        let sc = match parse(&text) {
            Ok(sc) => sc,
            Err(e) => {
                let _ = writeln!(report, "{file}: does not parse: {e}");
                failed.push(file);
                continue;
            }
        };
        if sc.description.trim().is_empty() || sc.steps_len() == 0 {
            let _ = writeln!(report, "{file}: scenario `{}` needs a description and steps", sc.name);
            failed.push(file.clone());
        }
        if let Some(other) = names.insert(sc.name.clone(), file.clone()) {
            let _ = writeln!(report, "{file}: scenario name `{}` is also used by {other}", sc.name);
            failed.push(file.clone());
        }
        let failures = run_scenario(&sc).await;
        if !failures.is_empty() {
            let _ = writeln!(report, "{file}:");
            for x in &failures {
                let _ = writeln!(report, "  {x}");
            }
            failed.push(sc.name.clone());
        }
    }
    assert!(failed.is_empty(), "{} of {} scenarios failed: {failed:?}\n{report}", failed.len(), files.len());
    assert!(files.len() >= 10, "expected at least 10 scenario files in {}, found {}", dir.display(), files.len());
}

/// A scenario whose steps are all right passes; used to show the wrong ones below fail only
/// because of their wrong expectations.
const GOOD: &str = r#"
name: inline-good
description: control for the harness tests
containers:
  bob_dm: {owner: o, viewers: [bob]}
setup:
  - participants: [o, alice, bob]
  - item: {id: f1, owner: o, origin: [alice, bob]}
  - item: {id: f2, owner: o, origin: [alice]}
steps:
  - check: {item: f1, container: bob_dm}
    expect: admitted_origin
  - check: {container: bob_dm}
    expect: {f1: admitted_origin, f2: denied_not_in_audience}
  - lookup: {container: bob_dm}
    expect: [f1]
  - item: {id: f1, owner: o, origin: public}
    expect_error: {status: 409, code: item_exists}
"#;

#[tokio::test]
async fn the_harness_passes_a_correct_scenario() {
    let sc = parse(GOOD).expect("inline scenario parses");
    let failures = run_scenario(&sc).await;
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test]
async fn the_harness_reports_wrong_expectations() {
    // Each case replaces one line of GOOD with a wrong expectation; each must fail and the
    // report must name the step and show what the service actually answered.
    let cases = [
        (
            "    expect: admitted_origin\n  - check: {container",
            "    expect: denied_not_in_audience\n  - check: {container",
            "step 1 (",
            "admitted_origin",
        ),
        ("f2: denied_not_in_audience}", "f2: admitted_origin}", "step 2 (", "denied_not_in_audience"),
        ("    expect: [f1]", "    expect: [f1, f2]", "step 3 (", "[\"f1\"]"),
        ("{status: 409, code: item_exists}", "{status: 404, code: item_exists}", "step 4 (", "409 Conflict"),
        ("{status: 409, code: item_exists}", "{status: 409, code: origin_unresolved}", "step 4 (", "item_exists"),
        (
            "  - item: {id: f1, owner: o, origin: public}",
            "  - item: {id: f9, owner: o, origin: public}",
            "step 4 (",
            "201 Created",
        ),
    ];
    for (from, to, step, actual) in cases {
        assert!(GOOD.contains(from), "case pattern not in GOOD: {from}");
        let sc = parse(&GOOD.replacen(from, to, 1)).unwrap_or_else(|e| panic!("case `{to}` parses: {e}"));
        let failures = run_scenario(&sc).await;
        assert!(!failures.is_empty(), "the harness accepted a wrong expectation: {to}");
        let all = failures.join("\n");
        for needle in ["scenario `inline-good`", step, actual] {
            assert!(all.contains(needle), "failure for `{to}` does not show {needle}: {all}");
        }
    }
    // A refused write that the scenario expects to succeed fails too, and so does an unknown
    // key anywhere in the format.
    let text =
        GOOD.replace("  - item: {id: f2, owner: o, origin: [alice]}", "  - item: {id: f2, owner: o, origin: [ghost]}");
    let failures = run_scenario(&parse(&text).expect("parses")).await;
    assert!(failures.iter().any(|f| f.contains("setup step 3 (") && f.contains("origin_unresolved")), "{failures:#?}");
    assert!(parse(&GOOD.replace("expect: [f1]", "expected: [f1]")).is_err());
    assert!(parse(&GOOD.replace("origin: [alice]}", "origin: [alice], colour: red}")).is_err());
}

/// A context step with a wrong expectation fails and shows what the service answered.
#[tokio::test]
async fn the_harness_reports_a_wrong_context() {
    let text = r#"
name: inline-context
description: control for the context step
containers:
  bob_dm: {owner: o, viewers: [bob]}
setup:
  - participants: [o, alice, bob]
  - item: {id: f1, owner: o, origin: [alice, bob], content: "ferry at nine"}
  - item: {id: f2, owner: o, origin: [alice], content: "ferry ferry ferry at ten"}
steps:
  - context: {container: bob_dm, query: ferry}
    expect: [f1]
"#;
    let failures = run_scenario(&parse(text).expect("parses")).await;
    assert!(failures.is_empty(), "{failures:#?}");
    let wrong = text.replace("expect: [f1]", "expect: [f2, f1]");
    let failures = run_scenario(&parse(&wrong).expect("parses")).await;
    let all = failures.join("\n");
    assert!(all.contains("step 1 (") && all.contains("[\"f1\"]"), "{all}");
}

/// Every failed expectation of a file is reported, a failed write included, and the run goes
/// on after it; a failed setup step ends the run and says so.
#[tokio::test]
async fn the_harness_reports_every_failure_and_stops_at_a_failed_setup_step() {
    let wrong = GOOD
        .replace("    expect: admitted_origin\n", "    expect: denied_not_in_audience\n    note: bob was in the room\n")
        .replace("    expect: [f1]", "    expect: [f1, f2]");
    let report = earshot::validate::run(&TestApp::new(), &parse(&wrong).expect("parses")).await;
    let lines: Vec<String> = report.failures.iter().map(ToString::to_string).collect();
    assert_eq!(report.failures.len(), 2, "{lines:#?}");
    assert!(lines[0].starts_with("step 1 (check f1 in bob_dm): ") && lines[0].ends_with("[note: bob was in the room]"));
    assert!(lines[1].starts_with("step 3 (lookup in bob_dm"), "{lines:#?}");
    assert!(!report.setup_failed && report.steps == 7);

    let broken_setup = GOOD.replace("origin: [alice]}", "origin: [ghost]}");
    let report = earshot::validate::run(&TestApp::new(), &parse(&broken_setup).expect("parses")).await;
    assert!(report.setup_failed && report.failures.len() == 1, "{:#?}", report.failures);
    assert!(report.failures[0].to_string().starts_with("setup step 3 (item f2): "));

    // A misshapen step is refused by the parser, before anything runs.
    let two_actions =
        GOOD.replace("  - lookup: {container: bob_dm}", "  - lookup: {container: bob_dm}\n    expand: f1");
    let e = parse(&two_actions).expect_err("two actions in one step");
    assert!(e.contains("step 3") && e.contains("exactly one action"), "{e}");
}
