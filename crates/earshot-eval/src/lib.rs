//! `earshot eval`: the paper's retrieval confirmation (its §5–6) reproduced on Earshot's own
//! generator, deterministic from a seed.
//!
//! One store holds every generated history (each history is its owner's memory); one BM25 index
//! (the store's search projection) serves every arm; every arm answers the same questions with a
//! fetch budget of 20 and a context of k = 5. The six arms differ only in their candidates:
//! - `earshot_indexed`: the service's own path (`StoreHandle::rank_admissible`: postings lookup,
//!   then BM25 over the admissible items only);
//! - `earshot_flat`: admission by the flat evaluator over the history's durable records;
//! - `unscoped`: every item of the owner's memory, no authorization;
//! - `session_silo`: only current items recorded in the asking container;
//! - `post_filter`: the unscoped top 20, then the inadmissible ones dropped (bounded post-filter);
//! - `principal_postings`: an independent implementation of per-participant postings
//!   `N_p = {(m, A) : p ∈ A ∈ AuthSets(m)}`, admitting m when one pair is in every viewer's postings.
//!
//! Six more arms rank by embeddings instead of BM25 (`earshot_dense`, `earshot_hybrid`: the
//! service's path under `dense` and `hybrid`; `unscoped_dense`, `unscoped_hybrid`: the owner's
//! whole memory; `post_filter_dense`, `post_filter_hybrid`: those top 20 with the inadmissible
//! ones dropped). Embeddings are made from the text with no model (`gen::embed`: a hashed bag of
//! words projected at random into 64 dimensions), the same for items and questions.
//!
//! Forbidden items are counted against the generator's own ledger, never against the store.
//!
//! Selection noninterference (SPEC §6.1) is measured per cell as a **score shift**: each arm's
//! scores of the admissible items it ranked, against the scores the same arm gives them in a
//! store that holds only the container's admissible items (the inadmissible ones, the
//! distractors, removed). Earshot must shift by exactly 0; the unscoped ranking is measured.

mod gen;
mod report;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use earshot_store::durable::{encode_records, Records};
use earshot_store::flat::{Flat, FlatViewers};
use earshot_store::model::{ContainerInput, Identity, ViewersInput};
use earshot_store::search::SearchIndex;
use earshot_store::{Backend, Earshot, Iid, MemoryBackend, Query, Snapshot, Statistics, StoreHandle};

pub use gen::{embed, History, Kind, World, DOSES, EMBEDDING_DIMENSION};
pub use report::{Cell, Report};

/// The store every history is imported into.
const STORE: &str = "eval";
/// Fetch budget and context size (the paper's frozen values).
pub const FETCH: usize = 20;
pub const K: usize = 5;

/// The arms, in report order: the six BM25 arms, then the dense and hybrid ones.
pub const ARMS: [&str; 12] = [
    "earshot_indexed",
    "earshot_flat",
    "unscoped",
    "session_silo",
    "post_filter",
    "principal_postings",
    "earshot_dense",
    "earshot_hybrid",
    "unscoped_dense",
    "unscoped_hybrid",
    "post_filter_dense",
    "post_filter_hybrid",
];

/// Whether an arm authorizes (every authorized arm must show zero forbidden items).
pub fn authorized(arm: &str) -> bool {
    !arm.starts_with("unscoped")
}

/// Everything that can stop an evaluation.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("store: {0}")]
    Store(#[from] earshot_store::StoreError),
    #[error("writing {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("plot: {0}")]
    Plot(String),
    #[error("invariant broken: {0}")]
    Invariant(String),
}

/// What to run.
#[derive(Debug, Clone)]
pub struct EvalConfig {
    pub seed: u64,
    pub histories: usize,
    /// Worker threads answering questions (histories are split between them).
    pub threads: usize,
}

/// A clock fixed at the epoch: every grant in the generator is unexpiring.
struct Epoch;
impl earshot_store::Clock for Epoch {
    fn now_ms(&self) -> i64 {
        0
    }
}

/// Generates the histories, imports them into one store, builds the index, answers every
/// question with every arm and aggregates the report.
pub fn run(cfg: &EvalConfig) -> Result<Report, EvalError> {
    let started = Instant::now();
    let world = World::generate(cfg.seed, cfg.histories);
    let records: Records = world.records(STORE);
    let backend = Arc::new(MemoryBackend::default());
    backend.commit(STORE, encode_records(&records)?).map_err(earshot_store::StoreError::from)?;
    drop(records);
    let generated = started.elapsed();
    let earshot = Earshot::open_with(backend, Arc::new(Epoch), earshot_store::Config::default())?;
    let handle = earshot.store(STORE)?;
    let snapshot = handle.latest();
    handle.search_ready(&snapshot, std::time::Duration::from_secs(3600))?;
    handle.dense_ready(&snapshot)?;
    let indexed = started.elapsed();

    let threads = cfg.threads.max(1);
    let chunk = world.histories.len().div_ceil(threads).max(1);
    let results: Vec<Result<Vec<Vec<Cell>>, EvalError>> = std::thread::scope(|scope| {
        let jobs: Vec<_> = world
            .histories
            .chunks(chunk)
            .enumerate()
            .map(|(c, part)| {
                let (handle, snapshot) = (&handle, &snapshot);
                scope.spawn(move || {
                    part.iter()
                        .enumerate()
                        .map(|(i, h)| answer(handle, snapshot, h, (c * chunk + i).is_multiple_of(SHIFT_EVERY)))
                        .collect::<Result<Vec<_>, _>>()
                })
            })
            .collect();
        jobs.into_iter()
            .map(|j| j.join().unwrap_or_else(|_| Err(EvalError::Invariant("a worker thread panicked".into()))))
            .collect()
    });
    let mut cells = Vec::new();
    for part in results {
        for history in part? {
            cells.extend(history);
        }
    }
    earshot.shutdown();
    let mut report = Report::aggregate(cfg, &cells);
    report.timing = Some((generated, indexed, started.elapsed()));
    report.items = snapshot.item_count();
    Ok(report)
}

/// Writes the table (`report.txt`), the CSV (`report.csv`) and the plot (`recall_by_dose.svg`).
pub fn write_outputs(report: &Report, dir: &Path) -> Result<(), EvalError> {
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| EvalError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let table = dir.join("report.txt");
    std::fs::write(&table, report.table()).map_err(io(&table))?;
    let csv = dir.join("report.csv");
    std::fs::write(&csv, report.csv()).map_err(io(&csv))?;
    let svg = dir.join("recall_by_dose.svg");
    std::fs::write(&svg, report.svg()?).map_err(io(&svg))?;
    Ok(())
}

/// Answers every question of one history with every arm.
fn answer(handle: &StoreHandle, snap: &Snapshot, h: &History, measure_shift: bool) -> Result<Vec<Cell>, EvalError> {
    let missing = |what: &str| EvalError::Invariant(format!("{what} missing from the store"));
    let owner = snap.participant_id(&h.owner).ok_or_else(|| missing(&h.owner))?;
    let mut all: Vec<(Iid, usize)> = Vec::with_capacity(h.items.len());
    for (n, i) in h.items.iter().enumerate() {
        all.push((snap.item_id(&i.name).ok_or_else(|| missing(&i.name))?, n));
    }
    let by_iid: BTreeMap<Iid, usize> = all.iter().copied().collect();
    let iids: Vec<Iid> = all.iter().map(|(i, _)| *i).collect();
    let flat = Flat::new(&h.records);
    let postings = Postings::new(h);
    // The distractor-free reference of each container asked in, built on its first question.
    let mut references: BTreeMap<usize, Reference> = BTreeMap::new();
    let mut cells = Vec::with_capacity(h.questions.len() * ARMS.len());
    for q in &h.questions {
        let channel = h.channels.get(q.channel).ok_or_else(|| missing("a question's container"))?;
        let viewers = channel.viewers.clone();
        let others: Vec<String> = viewers.iter().filter(|v| **v != h.owner).cloned().collect();
        // One-to-one containers name their viewer by transport identity, groups by participant.
        let container = match others.as_slice() {
            [one] => ContainerInput {
                owner: h.owner.clone(),
                viewers: ViewersInput {
                    identities: vec![Identity {
                        transport: channel.transport.into(),
                        identifier: gen::identifier(channel.transport, one),
                    }],
                    ..ViewersInput::default()
                },
            },
            _ => ContainerInput {
                owner: h.owner.clone(),
                viewers: ViewersInput { participants: others.clone(), ..ViewersInput::default() },
            },
        };
        let resolved = snap.resolve_container(&container)?;
        if !matches!(&resolved.viewers, earshot_core::Viewers::Resolved(v) if v.len() == viewers.len()) {
            return Err(EvalError::Invariant(format!("the container of `{}` did not resolve", q.query)));
        }
        // Every arm that selects a candidate set ranks it the way the service ranks the
        // admissible set: BM25 with the statistics of that set (SPEC §6.1). The unscoped arm
        // ranks the owner's whole memory with the whole index's statistics, as a memory store
        // without authorization would; the post-filter drops items from that ranking.
        let rank_set = |keep: &dyn Fn(Iid, usize) -> bool| -> Result<Vec<(usize, f32)>, EvalError> {
            let set: Vec<Iid> = all.iter().filter(|(iid, n)| keep(*iid, *n)).map(|(iid, _)| *iid).collect();
            Ok(handle
                .rank_candidates(snap, &set, &q.query, FETCH)?
                .iter()
                .filter_map(|(iid, score)| Some((*by_iid.get(iid)?, *score)))
                .collect())
        };
        let full = handle.rank_candidates_with(snap, &iids, &q.query, iids.len(), Statistics::WholeIndex)?;
        let indexed: Vec<(usize, f32)> = handle
            .rank_admissible(snap, &resolved, &[owner], 0, &q.query, FETCH)?
            .fetched
            .iter()
            .filter_map(|r| Some((*by_iid.get(&r.iid)?, r.score)))
            .collect();
        let store_admits = |iid: Iid| snap.check_iid(iid, &resolved.viewers, 0).admitted;
        if indexed != rank_set(&|iid, _| store_admits(iid))? {
            return Err(EvalError::Invariant(format!(
                "the indexed path ranked `{}` differently from the store-admitted set ranked alone",
                q.query
            )));
        }
        let fv = FlatViewers::Set(viewers.clone());
        // The three authorizing evaluators (store, flat, postings) are policy-equivalent: they
        // must agree on every item of the memory, not only on the ones that rank.
        for (iid, n) in &all {
            let Some(item) = h.items.get(*n) else { continue };
            let (s, f, p) =
                (store_admits(*iid), flat.check(&item.name, &fv, 0).admitted, postings.admits(h, *n, &viewers));
            if s != f || s != p || s != h.admits(item, &viewers) {
                return Err(EvalError::Invariant(format!(
                    "admission of `{}` for `{}`: store {s}, flat {f}, postings {p}, ledger {}",
                    item.name,
                    q.query,
                    h.admits(item, &viewers)
                )));
            }
        }
        let unscoped: Vec<(usize, f32)> =
            full.iter().filter_map(|(iid, score)| Some((*by_iid.get(iid)?, *score))).take(FETCH).collect();
        // Dense and hybrid: the service's path, and the owner's whole memory (hybrid's BM25 half
        // with the whole index's statistics, as the unscoped arm ranks), then its post-filter.
        let qe = handle.query_embedding(snap, &embed(&q.query))?;
        let named = |v: Vec<(Iid, f32)>| -> Vec<(usize, f32)> {
            v.iter().filter_map(|(iid, score)| Some((*by_iid.get(iid)?, *score))).collect()
        };
        let gated = |query: Query<'_>| -> Result<Vec<(usize, f32)>, EvalError> {
            let r = handle.rank_admissible_by(snap, &resolved, &[owner], 0, query, FETCH)?;
            Ok(r.fetched.iter().filter_map(|r| Some((*by_iid.get(&r.iid)?, r.score))).collect())
        };
        let ungated = |query: Query<'_>| -> Result<Vec<(usize, f32)>, EvalError> {
            Ok(named(handle.rank_candidates_by_with(snap, &iids, query, FETCH, Statistics::WholeIndex)?))
        };
        let post_filter = |v: &[(usize, f32)]| -> Vec<(usize, f32)> {
            v.iter().copied().filter(|(n, _)| all.get(*n).is_some_and(|(iid, _)| store_admits(*iid))).collect()
        };
        let (unscoped_dense, unscoped_hybrid) = (ungated(Query::dense(&qe))?, ungated(Query::hybrid(&q.query, &qe))?);
        let arms: [Vec<(usize, f32)>; 12] = [
            indexed,
            rank_set(&|_, n| h.items.get(n).is_some_and(|i| flat.check(&i.name, &fv, 0).admitted))?,
            unscoped.clone(),
            rank_set(&|_, n| h.items.get(n).is_some_and(|i| i.current && i.channel == Some(q.channel)))?,
            unscoped.iter().copied().filter(|(n, _)| all.get(*n).is_some_and(|(iid, _)| store_admits(*iid))).collect(),
            rank_set(&|_, n| postings.admits(h, n, &viewers))?,
            gated(Query::dense(&qe))?,
            gated(Query::hybrid(&q.query, &qe))?,
            unscoped_dense.clone(),
            unscoped_hybrid.clone(),
            post_filter(&unscoped_dense),
            post_filter(&unscoped_hybrid),
        ];
        let reference = if measure_shift {
            let reference = match references.entry(q.channel) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => {
                    let admissible: Vec<usize> =
                        all.iter().filter(|(iid, _)| store_admits(*iid)).map(|(_, n)| *n).collect();
                    e.insert(Reference::build(h, admissible)?)
                }
            };
            let (own_statistics, whole_index) = reference.scores(&q.query)?;
            Some((&*reference, own_statistics, whole_index))
        } else {
            None
        };
        // The post-filter's window is exhausted when it returned fewer than K items although
        // more admissible matches exist beyond the unscoped top 20.
        let exhausted = arms[4].len() < K && arms[0].len() > arms[4].len();
        for (arm, scored) in ARMS.iter().zip(arms) {
            let ranked: Vec<usize> = scored.iter().map(|(n, _)| *n).collect();
            let mut cell = Cell::score(arm, h, q, &ranked, &viewers);
            cell.exhausted = *arm == "post_filter" && exhausted;
            // Each arm is compared with itself in the distractor-free store: the arms that rank
            // a candidate set with its own statistics against those, the unscoped ranking and
            // its post-filter against whole-index statistics (there, the admissible items are
            // the whole index). The silo ranks a subset of the admissible items, so its scores
            // have no distractor-free counterpart.
            cell.score_shift = match (*arm, &reference) {
                (_, None) | ("session_silo", _) => None,
                // Dense scores have no corpus statistics; their noninterference is the property
                // test's (`tests/it/selection.rs`), not measured here.
                (a, _) if a.contains("dense") || a.contains("hybrid") => None,
                ("unscoped" | "post_filter", Some((r, _, whole_index))) => Some(score_shift(&scored, r, whole_index)),
                (_, Some((r, own_statistics, _))) => Some(score_shift(&scored, r, own_statistics)),
            };
            cells.push(cell);
        }
    }
    Ok(cells)
}

/// The score shift is measured on every `SHIFT_EVERY`-th history: each container asked in gets
/// a search index of its own (a few milliseconds each), which on every history would be most of
/// a 10,000-history run.
const SHIFT_EVERY: usize = 32;

/// Scores by history item.
type Scores = BTreeMap<usize, f32>;

/// A store that holds only one container's admissible items, as far as ranking can tell: their
/// contents in a search index of their own.
struct Reference {
    index: SearchIndex,
    /// History item of each document, ascending.
    items: Vec<usize>,
}

impl Reference {
    fn build(h: &History, items: Vec<usize>) -> Result<Reference, EvalError> {
        let contents = items
            .iter()
            .map(|n| {
                let name = h.items.get(*n).map(|i| i.name.as_str()).unwrap_or_default();
                h.records.contents.get(name).and_then(|c| c.content.clone())
            })
            .collect();
        Ok(Reference { index: SearchIndex::standalone(contents)?, items })
    }

    /// The scores of every matching item (history index → score) with the statistics of the
    /// items themselves, and with the whole reference index's statistics.
    fn scores(&self, query: &str) -> Result<(Scores, Scores), EvalError> {
        let docs: Vec<Iid> = (0..self.items.len() as Iid).collect();
        let named = |scored: Vec<(Iid, f32)>| -> Scores {
            scored.into_iter().filter_map(|(d, s)| Some((*self.items.get(d as usize)?, s))).collect()
        };
        Ok((
            named(self.index.score_with(query, &docs, Statistics::Candidates)?),
            named(self.index.score_with(query, &docs, Statistics::WholeIndex)?),
        ))
    }
}

/// The largest absolute difference between an arm's score of an admissible item and the
/// distractor-free reference's score of it. Items the reference does not hold are inadmissible
/// (counted as forbidden elsewhere) and skipped here; an admissible item the arm scored and the
/// reference did not (it cannot happen: same words) counts as an infinite shift.
fn score_shift(scored: &[(usize, f32)], reference: &Reference, scores: &Scores) -> f64 {
    scored
        .iter()
        .filter(|(n, _)| reference.items.binary_search(n).is_ok())
        .map(|(n, s)| scores.get(n).map_or(f64::INFINITY, |r| (f64::from(*s) - f64::from(*r)).abs()))
        .fold(0.0, f64::max)
}

/// Per-participant postings of one history, built from the generator's ledger:
/// participant → the (item, audience) pairs whose audience contains it (audience 0 is the
/// origin, 1.. the grants; the public audience contains everyone).
struct Postings {
    by_participant: BTreeMap<String, BTreeSet<(usize, usize)>>,
    public: BTreeSet<(usize, usize)>,
}

impl Postings {
    fn new(h: &History) -> Self {
        let mut by_participant: BTreeMap<String, BTreeSet<(usize, usize)>> = BTreeMap::new();
        let mut public = BTreeSet::new();
        for (n, item) in h.items.iter().enumerate() {
            let auds = std::iter::once(match &item.audience {
                gen::Aud::Public => None,
                gen::Aud::Members(m) => Some(m),
            })
            .chain(item.grants.iter().map(Some));
            for (a, aud) in auds.enumerate() {
                match aud {
                    None => {
                        public.insert((n, a));
                    }
                    Some(members) => {
                        for p in members {
                            by_participant.entry(p.clone()).or_default().insert((n, a));
                        }
                    }
                }
            }
        }
        Postings { by_participant, public }
    }

    /// Current, and some (item, audience) pair is in the postings of every viewer.
    fn admits(&self, h: &History, n: usize, viewers: &BTreeSet<String>) -> bool {
        if !h.items.get(n).is_some_and(|i| i.current) {
            return false;
        }
        let pairs = |p: &str| self.by_participant.get(p);
        let audiences = 1 + h.items.get(n).map_or(0, |i| i.grants.len());
        (0..audiences).any(|a| {
            self.public.contains(&(n, a)) || viewers.iter().all(|v| pairs(v).is_some_and(|s| s.contains(&(n, a))))
        })
    }
}
