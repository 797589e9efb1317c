//! The service's Prometheus metrics: what the request layer and the decision handlers record
//! (requests and latency per route template and status, decisions by endpoint and reason code) and the
//! exposition `/metrics` serves, which adds each visible store's revision, items, writer queue
//! depth, group-commit batch sizes and, on replicas, lag.
//!
//! Recording is on the request path, so it takes no lock but a shared read lock of a small map,
//! allocates nothing once a label set has been seen, and counts with atomics: route labels are
//! the `&'static` templates of [`crate::routes`], reason codes the closed sets of the store.
//! Encoding (text format 0.0.4, every family with `# HELP` and `# TYPE`) is
//! `prometheus-client`'s.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use arc_swap::ArcSwap;
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, EncodeMetric, LabelValueEncoder, MetricEncoder};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::Registry;

/// The `Content-Type` of the exposition (Prometheus text format 0.0.4).
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Upper bounds of the request latency buckets, in microseconds (0.5 ms to 30 s).
const LATENCY_BUCKETS_US: &[u64] = &[
    500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000,
    10_000_000, 30_000_000,
];

/// Most distinct reason codes kept per decision kind; reason codes are closed sets far smaller
/// than this, so the bound only guards the label cardinality against a future mistake.
const MAX_REASONS: usize = 64;

/// The route label of a request that matched no route.
pub const UNMATCHED_ROUTE: &str = "unmatched";

/// Which decision endpoint counted a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DecisionKind {
    Check,
    CheckBulk,
    Lookup,
    Authorize,
    /// `POST /uses`: the decision taken at the writer (allowed reasons whether or not a use was
    /// consumed, denied reasons).
    Use,
    /// An attempt's context assembly (`POST …/attempts/{attempt}/context`): each item admitted
    /// into the context, by its admission reason.
    Context,
}

impl DecisionKind {
    const ALL: [DecisionKind; 6] = [
        DecisionKind::Check,
        DecisionKind::CheckBulk,
        DecisionKind::Lookup,
        DecisionKind::Authorize,
        DecisionKind::Use,
        DecisionKind::Context,
    ];

    fn as_str(self) -> &'static str {
        match self {
            DecisionKind::Check => "check",
            DecisionKind::CheckBulk => "check_bulk",
            DecisionKind::Lookup => "lookup",
            DecisionKind::Authorize => "authorize",
            DecisionKind::Use => "use",
            DecisionKind::Context => "context",
        }
    }
}

/// A response's status, or that none was produced (the handler was dropped: the request timed
/// out, answered `503 request_timeout` by the layer outside, or the client went away).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    Code(u16),
    Cancelled,
}

impl EncodeLabelValue for Status {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        match self {
            Status::Code(c) => EncodeLabelValue::encode(&u64::from(*c), encoder),
            Status::Cancelled => EncodeLabelValue::encode(&"cancelled", encoder),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    route: &'static str,
    status: Status,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RouteLabels {
    method: &'static str,
    route: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct DecisionLabels {
    kind: &'static str,
    reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct StoreLabels {
    store: String,
}

/// A histogram of integer observations with fixed bounds, recorded with atomics only (the
/// `prometheus-client` histogram takes a mutex per observation). `per_unit` converts the recorded
/// unit to the exposed one (`1e6`: microseconds to seconds).
#[derive(Debug, Clone)]
pub struct IntHistogram(Arc<IntHistogramInner>);

#[derive(Debug)]
struct IntHistogramInner {
    bounds: &'static [u64],
    /// Recorded units per exposed unit (a divisor: `25_000 / 1e6` is exactly `0.025`).
    per_unit: f64,
    /// One per bound, and one for larger observations.
    buckets: Box<[AtomicU64]>,
    sum: AtomicU64,
    count: AtomicU64,
}

impl IntHistogram {
    fn new(bounds: &'static [u64], per_unit: f64) -> Self {
        let buckets = (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect();
        IntHistogram(Arc::new(IntHistogramInner {
            bounds,
            per_unit,
            buckets,
            sum: AtomicU64::new(0),
            count: AtomicU64::new(0),
        }))
    }

    fn latency() -> Self {
        Self::new(LATENCY_BUCKETS_US, 1e6)
    }

    fn observe(&self, v: u64) {
        let h = &self.0;
        let slot = h.bounds.partition_point(|b| *b < v);
        if let Some(b) = h.buckets.get(slot) {
            b.fetch_add(1, Ordering::Relaxed);
        }
        h.sum.fetch_add(v, Ordering::Relaxed);
        h.count.fetch_add(1, Ordering::Relaxed);
    }
}

impl TypedMetric for IntHistogram {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for IntHistogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let h = &self.0;
        let bounds = h.bounds.iter().map(|b| *b as f64 / h.per_unit).chain(std::iter::once(f64::INFINITY));
        let buckets: Vec<(f64, u64)> = bounds.zip(h.buckets.iter().map(|b| b.load(Ordering::Relaxed))).collect();
        // The count is the buckets' total, so a scrape racing an observation stays consistent.
        let count = buckets.iter().map(|(_, n)| n).sum();
        let sum = h.sum.load(Ordering::Relaxed) as f64 / h.per_unit;
        encoder.encode_histogram::<prometheus_client::encoding::NoLabelSet>(sum, count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

/// Labelled values computed at scrape time (per store), encoded as one family.
#[derive(Debug)]
struct Rows<L, V> {
    kind: MetricType,
    rows: Vec<(L, V)>,
}

impl<L, V> Rows<L, V> {
    fn new(kind: MetricType) -> Self {
        Rows { kind, rows: Vec::new() }
    }
}

impl<L: EncodeLabelSet, V: EncodeValue> EncodeMetric for Rows<L, V> {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        for (labels, v) in &self.rows {
            v.encode_value(encoder.encode_family(labels)?)?;
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        self.kind
    }
}

/// One scrape-time value.
trait EncodeValue {
    fn encode_value(&self, encoder: MetricEncoder) -> Result<(), std::fmt::Error>;
}

#[derive(Debug)]
struct Gauge(i64);

impl EncodeValue for Gauge {
    fn encode_value(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        encoder.encode_gauge(&self.0)
    }
}

#[derive(Debug)]
struct GaugeF(f64);

impl EncodeValue for GaugeF {
    fn encode_value(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        encoder.encode_gauge(&self.0)
    }
}

#[derive(Debug)]
struct Count(u64);

impl EncodeValue for Count {
    fn encode_value(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        encoder.encode_counter::<prometheus_client::encoding::NoLabelSet, u64, f64>(&self.0, None)
    }
}

/// A histogram as read at scrape time: per-bucket (not cumulative) counts, sum and count.
#[derive(Debug)]
struct HistogramRows {
    buckets: Vec<(f64, u64)>,
    sum: f64,
    count: u64,
}

impl EncodeValue for HistogramRows {
    fn encode_value(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        encoder.encode_histogram::<prometheus_client::encoding::NoLabelSet>(self.sum, self.count, &self.buckets, None)
    }
}

/// What one service instance records, shared by the request layer and the handlers.
#[derive(Debug)]
pub struct Metrics {
    requests: Family<RequestLabels, prometheus_client::metrics::counter::Counter>,
    latency: Family<RouteLabels, IntHistogram, fn() -> IntHistogram>,
    /// Per decision kind, count by reason code; looked up by `&str`, so counting allocates
    /// nothing once a reason has been seen.
    decisions: [DecisionCounts; DecisionKind::ALL.len()],
}

/// One decision kind's counts by reason code.
///
/// Counting is on every decision, from every worker, so it takes no lock: the map is read
/// through [`ArcSwap::load`] (a slot of the calling thread, no count shared between cores) and
/// only the reason's own counter is incremented. A reason seen for the first time (at most
/// [`MAX_REASONS`] per kind, then `other`) replaces the map with a copy that holds it, under
/// `adding` so that two first sightings cannot lose one another's counter.
#[derive(Debug, Default)]
struct DecisionCounts {
    by_reason: ArcSwap<HashMap<Box<str>, Arc<AtomicU64>>>,
    adding: Mutex<()>,
}

impl DecisionCounts {
    fn count(&self, reason: &str) {
        if let Some(n) = self.by_reason.load().get(reason) {
            n.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let _adding = self.adding.lock().unwrap_or_else(PoisonError::into_inner);
        let current = self.by_reason.load_full();
        let key = if current.len() < MAX_REASONS || current.contains_key(reason) { reason } else { "other" };
        if let Some(n) = current.get(key) {
            n.fetch_add(1, Ordering::Relaxed);
            return;
        }
        // The counters are shared with the map being replaced: a count made through it while
        // this copy is built is not lost.
        let mut next = HashMap::clone(&current);
        next.insert(key.into(), Arc::new(AtomicU64::new(1)));
        self.by_reason.store(Arc::new(next));
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        Metrics {
            requests: Family::default(),
            latency: Family::new_with_constructor(IntHistogram::latency),
            decisions: Default::default(),
        }
    }

    /// One request answered (or cancelled) after `elapsed`.
    pub fn record_request(&self, method: &'static str, route: &'static str, status: Status, elapsed: Duration) {
        self.requests.get_or_create(&RequestLabels { method, route, status }).inc();
        let us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.latency.get_or_create(&RouteLabels { method, route }).observe(us);
    }

    /// One decision of `kind` answered with `reason`.
    pub fn record_decision(&self, kind: DecisionKind, reason: &str) {
        if let Some(counts) = self.decisions.get(kind as usize) {
            counts.count(reason);
        }
    }

    /// Counts every decision of a list.
    pub fn record_decisions<'a>(&self, kind: DecisionKind, reasons: impl IntoIterator<Item = &'a str>) {
        for r in reasons {
            self.record_decision(kind, r);
        }
    }

    /// The exposition: the per-store figures of every store `visible` admits, and, when `whole`
    /// (the caller reads every store), this instance's own counters. Those count every store
    /// together (requests, decisions, tenancy), so a caller limited to some stores never sees
    /// them: they would show figures made in stores it cannot read.
    pub fn encode(&self, earshot: &earshot_store::Earshot, whole: bool, visible: impl Fn(&str) -> bool) -> String {
        let mut registry = Registry::default();
        if whole {
            self.register_instance(&mut registry, earshot);
        }
        self.register_stores(&mut registry, earshot, visible);
        let mut out = String::new();
        // Writing to a `String` cannot fail.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &registry);
        out
    }

    /// The counters of the whole instance: HTTP requests, decisions, tenancy.
    fn register_instance(&self, registry: &mut Registry, earshot: &earshot_store::Earshot) {
        registry.register(
            "earshot_http_requests",
            "HTTP requests answered, by method, route template and status (`cancelled`: the handler was dropped, by the request timeout or a client that went away)",
            self.requests.clone(),
        );
        registry.register(
            "earshot_http_request_duration_seconds",
            "Time from a request's head to its response, by method and route template",
            self.latency.clone(),
        );

        let mut decisions = Rows::<DecisionLabels, Count>::new(MetricType::Counter);
        for kind in DecisionKind::ALL {
            if let Some(counts) = self.decisions.get(kind as usize) {
                let map = counts.by_reason.load();
                let mut rows: Vec<_> = map.iter().map(|(r, n)| (r.to_string(), n.load(Ordering::Relaxed))).collect();
                rows.sort();
                decisions.rows.extend(
                    rows.into_iter().map(|(reason, n)| (DecisionLabels { kind: kind.as_str(), reason }, Count(n))),
                );
            }
        }
        registry.register(
            "earshot_decisions",
            "Decisions answered, by endpoint (`check`, `check_bulk`, `lookup`: each item, `authorize`, `use`: `POST /uses`, `context`: each item of an assembled context) and reason code",
            decisions,
        );

        let t = earshot.tenancy();
        let gauge = |v: usize| {
            let g = prometheus_client::metrics::gauge::Gauge::<i64>::default();
            g.set(i64::try_from(v).unwrap_or(i64::MAX));
            g
        };
        let counter = |v: u64| {
            let c = prometheus_client::metrics::counter::Counter::<u64>::default();
            c.inc_by(v);
            c
        };
        registry.register("earshot_stores_loaded", "Stores loaded in memory now", gauge(t.loaded));
        registry.register(
            "earshot_stores_unloaded",
            "Stores known to exist and not loaded in memory (evicted, or beyond the cap at start-up)",
            gauge(t.unloaded),
        );
        registry.register("earshot_store_evictions", "Stores evicted from memory since start-up", counter(t.evictions));
        registry.register(
            "earshot_store_reloads",
            "Stores loaded again on their first use after an eviction (or after start-up)",
            counter(t.reloads),
        );
        let seconds = |micros: u64| {
            let g = prometheus_client::metrics::gauge::Gauge::<f64, std::sync::atomic::AtomicU64>::default();
            g.set(micros as f64 / 1e6);
            g
        };
        registry.register(
            "earshot_store_reload_seconds_sum",
            "Total time those loads took, in seconds (divide by earshot_store_reloads_total for the mean)",
            seconds(t.reload_micros),
        );
        registry.register(
            "earshot_store_reload_seconds_max",
            "The longest of those loads, in seconds",
            seconds(t.reload_micros_max),
        );
        registry.register(
            "earshot_writer_threads",
            "Threads of the writer pool that runs every store's writer",
            gauge(t.writer_threads),
        );
    }

    /// The figures of each store `visible` admits.
    fn register_stores(
        &self,
        registry: &mut Registry,
        earshot: &earshot_store::Earshot,
        visible: impl Fn(&str) -> bool,
    ) {
        let mut revision = Rows::<StoreLabels, Gauge>::new(MetricType::Gauge);
        let mut items = Rows::<StoreLabels, Gauge>::new(MetricType::Gauge);
        let mut queue = Rows::<StoreLabels, Gauge>::new(MetricType::Gauge);
        let mut batches = Rows::<StoreLabels, HistogramRows>::new(MetricType::Histogram);
        let mut lag_revisions = Rows::<StoreLabels, Gauge>::new(MetricType::Gauge);
        let mut lag_seconds = Rows::<StoreLabels, GaugeF>::new(MetricType::Gauge);
        for id in earshot.store_ids() {
            if !visible(&id) {
                continue;
            }
            // Not a use: a scrape must not keep idle stores loaded.
            let Some(h) = earshot.loaded(&id) else { continue };
            let snap = h.latest();
            let label = || StoreLabels { store: id.clone() };
            revision.rows.push((label(), Gauge(i64::try_from(snap.revision()).unwrap_or(i64::MAX))));
            items.rows.push((label(), Gauge(i64::try_from(snap.item_count()).unwrap_or(i64::MAX))));
            let m = h.metrics();
            queue.rows.push((label(), Gauge(m.queue_depth())));
            let b = m.batch_sizes();
            let bounds = earshot_store::metrics::BATCH_BUCKETS.iter().map(|b| *b as f64).chain([f64::INFINITY]);
            let buckets = bounds.zip(b.buckets).collect();
            batches.rows.push((label(), HistogramRows { buckets, sum: b.sum as f64, count: b.count }));
            if let Some((revs, ms)) = m.lag() {
                lag_revisions.rows.push((label(), Gauge(i64::try_from(revs).unwrap_or(i64::MAX))));
                lag_seconds.rows.push((label(), GaugeF(ms as f64 / 1000.0)));
            }
        }
        registry.register("earshot_store_revision", "Latest published (durable) revision of each store", revision);
        registry.register("earshot_store_items", "Items in each store at its latest revision", items);
        registry.register(
            "earshot_writer_queue_depth",
            "Writes submitted to each store's writer and not yet answered (queued or in the commit in progress)",
            queue,
        );
        registry.register(
            "earshot_writer_batch_size",
            "Commands folded into one durable group commit, per store",
            batches,
        );
        registry.register(
            "earshot_store_lag_revisions",
            "Revisions a replica's published state is behind its shared datastore's head (replicas over PostgreSQL only)",
            lag_revisions,
        );
        registry.register(
            "earshot_store_lag_seconds",
            "Seconds since a replica last caught up with its shared datastore's head (replicas over PostgreSQL only)",
            lag_seconds,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(c: &DecisionCounts) -> Vec<(String, u64)> {
        let mut v: Vec<_> =
            c.by_reason.load().iter().map(|(r, n)| (r.to_string(), n.load(Ordering::Relaxed))).collect();
        v.sort();
        v
    }

    #[test]
    fn decision_counts_lose_nothing_when_workers_first_see_reasons_together() {
        let c = DecisionCounts::default();
        let reasons = ["a", "b", "c", "d"];
        std::thread::scope(|s| {
            for t in 0..4 {
                let c = &c;
                s.spawn(move || {
                    for i in 0..5_000 {
                        c.count(reasons[(i + t) % reasons.len()]);
                    }
                });
            }
        });
        assert_eq!(counts(&c), reasons.iter().map(|r| (r.to_string(), 5_000)).collect::<Vec<_>>());
    }

    #[test]
    fn reasons_past_the_bound_are_counted_as_other() {
        let c = DecisionCounts::default();
        for i in 0..MAX_REASONS + 3 {
            c.count(&format!("r{i}"));
        }
        c.count("r0");
        let v = counts(&c);
        assert_eq!(v.len(), MAX_REASONS + 1, "the bound, and `other`");
        assert!(v.contains(&("other".to_string(), 3)));
        assert!(v.contains(&("r0".to_string(), 2)), "a reason already counted keeps its own row");
    }
}
