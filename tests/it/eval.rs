//! Owns the tests of `earshot eval`: the expected shape of the paper's confirmation on a small
//! run (zero forbidden items in every authorized arm, unscoped exposure at dose 8, recall parity
//! with the policy-equivalent arms, never below unscoped or silo, an advantage that grows with
//! dose; the dense and hybrid arms: gated ones leak nothing, ungated ones leak), and
//! determinism (same seed, same bytes).

use earshot_eval::{authorized, run, EvalConfig, Report, ARMS, DOSES, FETCH};

fn small(seed: u64, histories: usize) -> Report {
    run(&EvalConfig { seed, histories, threads: 2 }).unwrap_or_else(|e| panic!("eval: {e}"))
}

/// The shape the paper reports, as checks that can each fail on a report.
fn shape(r: &Report) -> Result<(), String> {
    let arm = |n: &str| r.arm(n).ok_or(format!("no arm {n}"));
    for a in &r.arms {
        if a.contexts == 0 {
            return Err(format!("{} answered nothing", a.arm));
        }
        if authorized(a.arm) && (a.forbidden_items != 0 || a.contexts_with_forbidden != 0) {
            return Err(format!("authorized arm {} put {} forbidden items in context", a.arm, a.forbidden_items));
        }
    }
    let (e, u, silo) = (arm("earshot_indexed")?, arm("unscoped")?, arm("session_silo")?);
    if u.dose8_share_with_forbidden() <= 0.5 {
        return Err(format!(
            "unscoped exposed forbidden items in only {:.3} of dose-8 contexts",
            u.dose8_share_with_forbidden()
        ));
    }
    // The ungated dense and hybrid rankings leak like the unscoped BM25 one; their gated
    // counterparts (checked above with every authorized arm) never do.
    for ungated in ["unscoped_dense", "unscoped_hybrid"] {
        if arm(ungated)?.contexts_with_forbidden == 0 {
            return Err(format!("{ungated} put no forbidden item in any context"));
        }
    }
    for other in ["earshot_flat", "principal_postings"] {
        if arm(other)?.recall_at != e.recall_at {
            return Err(format!(
                "{other} recall differs from earshot_indexed: {:?} vs {:?}",
                arm(other)?.recall_at,
                e.recall_at
            ));
        }
    }
    let p = arm("post_filter")?;
    // The post-filter ranks with the statistics of the owner's whole memory and drops what the
    // container may not see; Earshot ranks the admissible set with its own statistics (SPEC
    // §6.1). The two orders differ a little: on this run (seed 7, 300 histories) the post-filter
    // is 1.1 points ahead at k=2 and level from k=4 on. That is the measured price of selection
    // noninterference here; more than two points would be a regression.
    const ORDER_NOISE: f64 = 0.02;
    for k in 0..FETCH {
        let (ek, pk) = (e.recall_at[k], p.recall_at[k]);
        if pk > ek + ORDER_NOISE {
            return Err(format!(
                "post-filter Recall@{} is {pk}, earshot {ek} ({} windows exhausted)",
                k + 1,
                p.windows_exhausted
            ));
        }
        if ek + 1e-12 < u.recall_at[k] || ek + 1e-12 < silo.recall_at[k] {
            return Err(format!(
                "earshot Recall@{} {ek} is below unscoped {} or silo {}",
                k + 1,
                u.recall_at[k],
                silo.recall_at[k]
            ));
        }
    }
    // Selection noninterference (SPEC §6.1): removing the inadmissible items from the store moves
    // no admissible score of the arms that rank with their candidates' statistics, not by one
    // bit; the unscoped ranking's statistics include them, and it is measured to move.
    for arm_name in ["earshot_indexed", "earshot_flat", "principal_postings"] {
        match arm(arm_name)?.score_shift_max {
            Some(0.0) => {}
            other => return Err(format!("{arm_name} selection score shift is {other:?}, not exactly 0")),
        }
    }
    if !u.score_shift_max.is_some_and(|s| s > 0.0) {
        return Err(format!("the unscoped arm's score shift was not measured: {:?}", u.score_shift_max));
    }
    let adv: Vec<f64> = e.recall_by_dose.iter().zip(&u.recall_by_dose).map(|(a, b)| a - b).collect();
    let (first, last) = (adv[0], adv[DOSES.len() - 1]);
    if last < first + 0.1 || adv.windows(2).any(|w| w[1] + 0.05 < w[0]) {
        return Err(format!("the advantage over unscoped does not grow with dose: {adv:?}"));
    }
    Ok(())
}

#[test]
fn a_small_run_has_the_papers_shape() {
    let r = small(7, 300);
    println!("{}", r.table());
    shape(&r).unwrap_or_else(|e| panic!("{e}\n{}", r.table()));
    assert_eq!(r.arms.len(), ARMS.len());
    // The checks can fail: an arm that leaks, or a flat advantage, is reported.
    let mut leaky = r.clone();
    if let Some(a) = leaky.arms.iter_mut().find(|a| a.arm == "post_filter") {
        a.forbidden_items = 1;
        a.contexts_with_forbidden = 1;
    }
    assert!(shape(&leaky).is_err_and(|e| e.contains("post_filter")));
    let mut leaky_dense = r.clone();
    if let Some(a) = leaky_dense.arms.iter_mut().find(|a| a.arm == "earshot_dense") {
        a.forbidden_items = 1;
        a.contexts_with_forbidden = 1;
    }
    assert!(shape(&leaky_dense).is_err_and(|e| e.contains("earshot_dense")));
    let mut flat_advantage = r.clone();
    if let Some(u) = flat_advantage.arms.iter_mut().find(|a| a.arm == "unscoped") {
        u.recall_by_dose = vec![u.recall_by_dose[0]; DOSES.len()];
    }
    assert!(shape(&flat_advantage).is_err_and(|e| e.contains("does not grow")));
    let mut shifted = r.clone();
    if let Some(e) = shifted.arms.iter_mut().find(|a| a.arm == "earshot_indexed") {
        e.score_shift_max = Some(f64::from(f32::EPSILON));
    }
    assert!(shape(&shifted).is_err_and(|e| e.contains("selection score shift")));
}

#[test]
fn the_same_seed_gives_the_same_bytes() {
    let (a, b, c) = (small(11, 60), small(11, 60), small(12, 60));
    assert_eq!(a.table(), b.table());
    assert_eq!(a.csv(), b.csv());
    assert_eq!(a.svg().expect("svg"), b.svg().expect("svg"));
    assert_ne!(a.csv(), c.csv(), "another seed should give another run");
    assert!(a.svg().expect("svg").starts_with("<svg"));
}
