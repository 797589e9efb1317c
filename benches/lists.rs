//! The list and relationship-tuple reads at scale (no criterion: each figure is the median of a
//! few hundred timed calls on the one 1M-item store the decision benches use, built once).
//!
//! Run with `cargo bench -p earshot-benches --bench lists`; `EARSHOT_BENCH_ITEMS` sets the size.

use std::time::{Duration, Instant};

use earshot_benches::{fixture, items_from_env, median, quantile, NOW_MS};
use earshot_store::lists::{GrantFilter, ItemFilter, Paging, ParticipantFilter};
use earshot_store::tuples::TupleFilter;

/// The service's allocator (`crates/earshot/src/main.rs`): figures are taken on the memory
/// layout `earshot serve` runs with.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Times `f` `n` times; prints the median and p95.
fn time<T>(name: &str, n: usize, mut f: impl FnMut() -> T) {
    let mut v: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .collect();
    let m = median(&v);
    v.sort();
    println!("  {name}: median {m:.1?}, p95 {:.1?}", quantile(&v, 0.95));
}

fn main() {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| "lists".contains(f.as_str())) {
        return;
    }
    let items = items_from_env(1_000_000);
    let fx = fixture(items);
    let snap = fx.store.latest();
    println!("lists: {items} items (store built and opened in {:.1?})", fx.open_time);
    let page = |limit: usize| Paging { limit: Some(limit), cursor: None };
    let owner = fx.syn.probes.owner.clone();
    let item = fx.syn.probes.granted3_item.id.clone();

    time("items, first page of 100, no filter", 200, || snap.list_items(&ItemFilter::default(), &page(100)));
    let by_owner = ItemFilter { owner: Some(owner.clone()), ..ItemFilter::default() };
    time("items of one owner, first page of 100", 200, || snap.list_items(&by_owner, &page(100)));
    time("items, 10 pages of 100 by cursor", 20, || {
        let mut paging = page(100);
        for _ in 0..10 {
            let p = snap.list_items(&ItemFilter::default(), &paging).expect("page");
            paging.cursor = p.next_cursor;
        }
    });
    time("participants, first page of 100", 200, || snap.list_participants(&ParticipantFilter::default(), &page(100)));
    let of_item = GrantFilter { item: Some(item.clone()), ..GrantFilter::default() };
    time("grants of one item", 200, || snap.list_grants(&of_item, &page(100), NOW_MS));
    time("grants, first page of 100, no filter", 200, || snap.list_grants(&GrantFilter::default(), &page(100), NOW_MS));
    let tuples_of_item =
        TupleFilter { resource_type: Some("item".into()), resource_id: Some(item.clone()), ..TupleFilter::default() };
    time("tuples of one item", 200, || snap.read_tuples(&tuples_of_item, &page(100), NOW_MS));
    let member_of = TupleFilter {
        relation: Some("member".into()),
        subject_type: Some("participant".into()),
        subject_id: Some(owner.clone()),
        ..TupleFilter::default()
    };
    time("audiences one participant is a member of (tuples), first page", 50, || {
        snap.read_tuples(&member_of, &page(100), NOW_MS)
    });
    time("every tuple, first page of 100", 50, || snap.read_tuples(&TupleFilter::default(), &page(100), NOW_MS));
    // A filter no order indexes, matching rarely: a page ends at the scan budget.
    let quarantined = ItemFilter { state: Some(earshot_core::State::Quarantined), ..ItemFilter::default() };
    time("items by state alone (few match), one page (scan budget)", 50, || snap.list_items(&quarantined, &page(100)));
    time("every tuple, 10 pages of 100 by cursor", 20, || {
        let mut paging = page(100);
        for _ in 0..10 {
            let p = snap.read_tuples(&TupleFilter::default(), &paging, NOW_MS).expect("page");
            paging.cursor = p.next_cursor;
        }
    });
}
