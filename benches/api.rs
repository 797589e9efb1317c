//! What the service's own layers cost a check, without sockets: the real router (`earshot_api::router`,
//! with an admin bearer token, so the auth gate runs as in production) called in process for
//! `GET /healthz` and for `POST /v1/stores/{store}/check`, on the store `scripts/bench-http.sh`
//! builds (30,000 items, 50 participants, a tenth public, the rest said among one to three).
//!
//! `scripts/bench-http.sh` measures the check path against `/healthz` over loopback, where the
//! kernel and the load generator take most of each request; this bench isolates the part that
//! is this crate's code (middleware, gate, extractors, the decision, the answer's encoding), so
//! a change there can be measured without the noise of the network path. Every answer's status
//! is asserted, and every check's `admitted` against the generator's expectation, inside the
//! timed loop (as the wrk scripts do). Each route is timed hot (calls back to back), from two
//! threads at once, and cold (`…/cold`: each call after a sweep that fills the caches with
//! other data, as the kernel and wrk do between two requests over loopback).
//!
//! Run with `cargo bench -p earshot-benches --bench api`; `EARSHOT_API_ITEMS` sets the size.
//! No request log is installed here (the binary writes one line per request on both routes).

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, Method, Request, StatusCode};
use criterion::{criterion_group, criterion_main, Criterion};
use earshot_api::{AppState, Auth, Scope, TokenConfig};
use earshot_store::{Config, Earshot, MemoryBackend, SystemClock};
use http_body_util::BodyExt;
use tower::ServiceExt;

/// The service's allocator (`crates/earshot/src/main.rs`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TOKEN: &str = "bench-api-admin-token-0123456789";
const STORE: &str = "one";
const PARTICIPANTS: usize = 50;
const CHECKS: usize = 2000;

/// A small deterministic generator (the same sequence on every run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The router over a fresh in-memory store, and the checks: (request body, expected `admitted`).
struct Bench {
    router: axum::Router,
    checks: Vec<(Bytes, bool)>,
    earshot: Arc<Earshot>,
}

async fn call(router: &axum::Router, method: Method, uri: &str, body: Option<String>) -> (StatusCode, Bytes) {
    let mut req = Request::builder().method(method).uri(uri).header(header::AUTHORIZATION, format!("Bearer {TOKEN}"));
    if body.is_some() {
        req = req.header(header::CONTENT_TYPE, "application/json");
    }
    let req = req.body(body.map_or_else(Body::empty, Body::from)).expect("a well-formed request");
    let res = router.clone().oneshot(req).await.expect("the router is infallible");
    let status = res.status();
    (status, res.into_body().collect().await.expect("an in-memory body").to_bytes())
}

async fn setup(items: usize) -> Bench {
    let earshot = Arc::new(
        Earshot::open_with(Arc::new(MemoryBackend::default()), Arc::new(SystemClock), Config::default())
            .expect("an in-memory store opens"),
    );
    let auth = Auth::from_config(vec![TokenConfig {
        name: "bench".into(),
        token: TOKEN.into(),
        scope: Scope::Admin,
        stores: None,
    }])
    .expect("a valid token");
    let router = earshot_api::router(AppState::new(earshot.clone(), auth));
    let ok = |what: &str, (status, body): (StatusCode, Bytes)| {
        assert!(status.is_success(), "{what}: {status} {}", String::from_utf8_lossy(&body));
    };
    ok("store", call(&router, Method::POST, "/v1/stores", Some(format!(r#"{{"id":"{STORE}"}}"#))).await);
    let participants = |id: &str, kind: &str| format!(r#"{{"id":"{id}","kind":"{kind}"}}"#);
    let path = format!("/v1/stores/{STORE}/participants");
    ok("owner", call(&router, Method::POST, &path, Some(participants("own", "agent"))).await);
    for p in 0..PARTICIPANTS {
        ok("participant", call(&router, Method::POST, &path, Some(participants(&format!("p{p}"), "person"))).await);
    }
    let mut rnd = Lcg(7);
    let mut audiences: Vec<Option<Vec<usize>>> = Vec::with_capacity(items);
    let path = format!("/v1/stores/{STORE}/items");
    for i in 0..items {
        let audience = if rnd.below(10) == 0 {
            None
        } else {
            let mut members: Vec<usize> = Vec::new();
            let n = 1 + rnd.below(3);
            while members.len() < n {
                let p = rnd.below(PARTICIPANTS);
                if !members.contains(&p) {
                    members.push(p);
                }
            }
            Some(members)
        };
        let origin = match &audience {
            None => r#""public""#.to_string(),
            Some(m) => {
                let names: Vec<String> = m.iter().map(|p| format!(r#""p{p}""#)).collect();
                format!(r#"{{"participants":[{}]}}"#, names.join(","))
            }
        };
        let body = format!(r#"{{"id":"{STORE}-i{i}","owner":"own","content":"benchmark item {i}","origin":{origin}}}"#);
        ok("item", call(&router, Method::POST, &path, Some(body)).await);
        audiences.push(audience);
    }
    let checks = (0..CHECKS)
        .map(|_| {
            let i = rnd.below(items);
            let viewer = match &audiences[i] {
                None => rnd.below(PARTICIPANTS),
                Some(m) if rnd.below(2) == 0 => m[rnd.below(m.len())],
                Some(m) => loop {
                    let p = rnd.below(PARTICIPANTS);
                    if !m.contains(&p) {
                        break p;
                    }
                },
            };
            let admitted = audiences[i].as_ref().is_none_or(|m| m.contains(&viewer));
            let body = format!(
                r#"{{"item":"{STORE}-i{i}","container":{{"owner":"own","viewers":{{"participants":["p{viewer}"]}}}}}}"#
            );
            (Bytes::from(body), admitted)
        })
        .collect();
    Bench { router, checks, earshot }
}

/// Whether an answer's `admitted` is `want` (an answer starts `{"item":"…","admitted":…`).
fn admitted_is(body: &[u8], want: bool) -> bool {
    let needle: &[u8] = if want { br#""admitted":true"# } else { br#""admitted":false"# };
    body.windows(needle.len()).any(|w| w == needle)
}

/// `GET /healthz` through the router, its answer verified.
async fn one_healthz(router: &axum::Router) {
    let req = Request::builder().method(Method::GET).uri("/healthz").body(Body::empty()).expect("request");
    let res = router.clone().oneshot(req).await.expect("infallible");
    assert_eq!(res.status(), StatusCode::OK);
    let body = res.into_body().collect().await.expect("body").to_bytes();
    assert!(body.starts_with(br#"{"status":"ok""#));
}

/// Wall time for two threads, each with its own runtime, to make `iters` calls each
/// (`call(thread, i)`), started together.
fn on_two_threads<F, Fut>(iters: u64, call: F) -> Duration
where
    F: Fn(usize, usize) -> Fut + Sync,
    Fut: std::future::Future<Output = ()>,
{
    let start = std::sync::Barrier::new(3);
    std::thread::scope(|s| {
        for t in 0..2 {
            let (start, call) = (&start, &call);
            s.spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
                start.wait();
                for i in 0..iters as usize {
                    rt.block_on(call(t, i));
                }
            });
        }
        start.wait();
        // The scope joins both threads before it returns.
        std::time::Instant::now()
    })
    .elapsed()
}

/// Bytes a cold call's sweep writes before it: more than any of the guests' L2 (1–2 MiB), as
/// the kernel's network path and wrk, between two requests over loopback, evict much of what
/// a request left in the core's caches.
const EVICT_BYTES: usize = 4 << 20;

/// Time for `iters` calls, each made with caches holding other data: before each (untimed), a
/// sweep writes one byte in every cache line of `evict`. Only the calls are timed, one
/// `Instant` pair each (the same on both routes), so a route's cold figure less its hot one is
/// what its code and data cost to bring back in.
fn cold<Fut>(rt: &tokio::runtime::Runtime, iters: u64, evict: &mut [u8], mut call: impl FnMut() -> Fut) -> Duration
where
    Fut: std::future::Future<Output = ()>,
{
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        for line in evict.chunks_mut(64) {
            line[0] = line[0].wrapping_add(1);
        }
        std::hint::black_box(&mut *evict);
        let started = std::time::Instant::now();
        rt.block_on(call());
        total += started.elapsed();
    }
    total
}

/// One check through the router, its answer verified.
async fn one_check(router: &axum::Router, uri: &str, auth: &str, body: &Bytes, admitted: bool) {
    let req = Request::builder()
        .method(Method::POST)
        .uri(uri)
        .header(header::AUTHORIZATION, auth)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.clone()))
        .expect("request");
    let res = router.clone().oneshot(req).await.expect("infallible");
    assert_eq!(res.status(), StatusCode::OK);
    let out = res.into_body().collect().await.expect("body").to_bytes();
    assert!(admitted_is(&out, admitted), "wrong answer: {}", String::from_utf8_lossy(&out));
}

fn api(c: &mut Criterion) {
    let items: usize = std::env::var("EARSHOT_API_ITEMS").ok().and_then(|v| v.parse().ok()).unwrap_or(30_000);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let bench = rt.block_on(setup(items));
    let check_uri = format!("/v1/stores/{STORE}/check");
    let auth = format!("Bearer {TOKEN}");

    let mut g = c.benchmark_group("api");
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("healthz", |b| b.iter(|| rt.block_on(one_healthz(&bench.router))));
    let mut k = 0usize;
    g.bench_function(format!("check/{items}"), |b| {
        b.iter(|| {
            k = (k + 1) % bench.checks.len();
            let (body, admitted) = &bench.checks[k];
            rt.block_on(one_check(&bench.router, &check_uri, &auth, body, *admitted))
        })
    });
    // The same calls from two threads at once (one runtime each, as the service's two workers
    // on this machine): the time per call grows by what calls share between cores (reference
    // counts, locks, counters), which a single thread never pays.
    g.bench_function("healthz/two-threads", |b| {
        b.iter_custom(|iters| on_two_threads(iters, |_, _| one_healthz(&bench.router)))
    });
    // Each thread its own copy of the bodies, so that the bench's own clones of a body never
    // share a reference count between the threads.
    let own = |t: usize| -> Vec<(Bytes, bool)> {
        bench.checks.iter().skip(t).step_by(2).map(|(b, a)| (Bytes::copy_from_slice(b), *a)).collect()
    };
    let per_thread = [own(0), own(1)];
    g.bench_function(format!("check/{items}/two-threads"), |b| {
        b.iter_custom(|iters| {
            on_two_threads(iters, |t, i| {
                let (body, admitted) = &per_thread[t][i % per_thread[t].len()];
                one_check(&bench.router, &check_uri, &auth, body, *admitted)
            })
        })
    });
    // Each call with the caches full of other data, as over loopback (`cold`).
    let mut evict = vec![0u8; EVICT_BYTES];
    g.bench_function("healthz/cold", |b| {
        b.iter_custom(|iters| cold(&rt, iters, &mut evict, || one_healthz(&bench.router)))
    });
    let mut k = 0usize;
    g.bench_function(format!("check/{items}/cold"), |b| {
        b.iter_custom(|iters| {
            cold(&rt, iters, &mut evict, || {
                k = (k + 1) % bench.checks.len();
                let (body, admitted) = &bench.checks[k];
                one_check(&bench.router, &check_uri, &auth, body, *admitted)
            })
        })
    });
    g.finish();
    bench.earshot.shutdown();
}

criterion_group!(benches, api);
criterion_main!(benches);
