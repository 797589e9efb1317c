//! Times the most expensive condition evaluations the cost budget admits (SPEC §2.6), to check
//! that `COST_BUDGET` keeps every evaluation to a few milliseconds. Run it in release:
//! `cargo run --release -p earshot-core --example condition_budget`.
//!
//! For each adversarial shape it grows the input (a literal list, a context list or string)
//! until one more step would be over the budget, then times the largest admitted evaluation (the
//! median of several runs) and reports its estimate, its time and nanoseconds per cost unit.
//! An example, not part of the core library: the core itself reads no clock.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "a measuring tool, not library code")]

use std::time::{Duration, Instant};

use earshot_core::condition::{check_context, Condition, ContextValue, RequestContext, COST_BUDGET};

struct Case {
    name: &'static str,
    /// The condition and its context for input size `n`.
    make: fn(usize) -> (String, RequestContext),
}

fn ints(n: usize) -> String {
    format!("[{}]", (0..n).map(|i| (i % 10).to_string()).collect::<Vec<_>>().join(","))
}

fn ctx_list(n: usize) -> RequestContext {
    let mut c = RequestContext::new();
    c.insert("xs".into(), ContextValue::List((0..n as i64).map(ContextValue::Int).collect()));
    c
}

fn ctx_strings(n: usize, each: usize) -> RequestContext {
    let mut c = RequestContext::new();
    c.insert("xs".into(), ContextValue::List((0..n).map(|_| ContextValue::String("x".repeat(each))).collect()));
    c
}

fn ctx_string(n: usize) -> RequestContext {
    let mut c = ctx_list(8);
    c.insert("s".into(), ContextValue::String("ab".repeat(n / 2)));
    c
}

const CASES: &[Case] = &[
    Case {
        name: "literal list, one comprehension",
        make: |n| (format!("{}.all(a, a >= 0)", ints(n)), RequestContext::new()),
    },
    Case {
        name: "literal lists, two nested",
        make: |n| (format!("{0}.all(a, {0}.all(b, a + b >= 0))", ints(n)), RequestContext::new()),
    },
    Case {
        name: "literal lists, two nested, exists_one",
        make: |n| (format!("{0}.exists_one(a, {0}.exists_one(b, a == b))", ints(n)), RequestContext::new()),
    },
    Case {
        name: "literal lists, nested map (list growth)",
        make: |n| (format!("size({0}.map(a, {0}.map(b, [a, b]))) > 0", ints(n)), RequestContext::new()),
    },
    Case { name: "context list, one comprehension", make: |n| ("xs.all(x, x >= 0)".into(), ctx_list(n)) },
    Case { name: "context list, two nested", make: |n| ("xs.all(a, xs.all(b, a + b >= 0))".into(), ctx_list(n)) },
    Case { name: "context list, filter", make: |n| ("size(xs.filter(x, x % 2 == 0)) >= 0".into(), ctx_list(n)) },
    Case { name: "context list, `in` per element", make: |n| ("xs.all(x, x in xs)".into(), ctx_list(n)) },
    Case {
        name: "context string, contains per element",
        make: |n| ("xs.all(x, !s.contains('abc') || x < 0)".into(), ctx_string(n)),
    },
    Case {
        name: "context string, concatenation per element",
        make: |n| ("xs.all(x, size(s + s + s) > 0)".into(), ctx_string(n)),
    },
    Case {
        name: "context string, map copies it per element",
        make: |n| ("size(xs.map(x, s + s)) > 0".into(), ctx_string(n)),
    },
    Case {
        name: "context strings, concatenated in a nested map",
        make: |n| ("size(xs.map(a, xs.map(b, a + b))) > 0".into(), ctx_strings(n, 64)),
    },
];

/// The median of 15 runs: the machine is shared, so the slowest run measures the neighbours.
fn median(c: &Condition, ctx: &RequestContext) -> Duration {
    let mut runs: Vec<Duration> = (0..15)
        .map(|_| {
            let t = Instant::now();
            let _ = std::hint::black_box(c.evaluate(ctx));
            t.elapsed()
        })
        .collect();
    runs.sort();
    runs[runs.len() / 2]
}

fn main() {
    println!("budget {COST_BUDGET} units");
    println!("{:<48} {:>7} {:>9} {:>10} {:>8}", "shape", "n", "estimate", "median", "ns/unit");
    let mut overall = Duration::ZERO;
    for case in CASES {
        // The largest admitted n: estimates grow with n, so stop at the first refusal.
        let mut best = None;
        let mut n = 1;
        loop {
            let (src, ctx) = (case.make)(n);
            let Ok(c) = Condition::compile(&src) else { break };
            if check_context(&ctx).is_err() {
                break;
            }
            match c.estimated_cost(&ctx) {
                Some(cost) if cost <= COST_BUDGET => best = Some((n, c, ctx, cost)),
                _ => break,
            }
            n += (n / 16).max(1);
        }
        let Some((n, c, ctx, cost)) = best else {
            println!("{:<48} refused at every size", case.name);
            continue;
        };
        let t = median(&c, &ctx);
        overall = overall.max(t);
        println!(
            "{:<48} {:>7} {:>9} {:>8.3}ms {:>8.2}",
            case.name,
            n,
            cost,
            t.as_secs_f64() * 1e3,
            t.as_nanos() as f64 / cost as f64
        );
    }
    println!("slowest shape at the budget (median): {:.3} ms", overall.as_secs_f64() * 1e3);
}
