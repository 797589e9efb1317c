//! Context assembly (SPEC §1.10): authorize first, then rank only what was admitted, then seal.
//!
//! The candidates of a context are exactly the admissible items of the attempt's container at
//! its pinned revision and time (the exhaustive lookup over postings, each candidate decided by
//! the same check as a direct check). Only they are scored, so an inadmissible item never takes
//! a fetch slot or a context slot, whatever the ranking:
//!
//! - `bm25` (the default): BM25 over the candidates' content (`search`), with the candidates'
//!   corpus statistics (SPEC §6.1), so an inadmissible item cannot shift a score either;
//! - `dense`: the similarity of each candidate's embedding to the query embedding
//!   (`memory::dense`), a function of that pair alone;
//! - `hybrid`: reciprocal rank fusion of the two, `Σ 1 / (RRF_K + rank)` over the candidates'
//!   BM25 order and dense order (ranks from 1, within the candidates only; an item absent from
//!   one order gets nothing from it), with [`RRF_K`] = 60.
//!
//! Ranking is by score, ties by item id; the top `fetch` form the fetch window and its first
//! `k` the context. The exact context (ids, content digests, bases, revision, query, ranking,
//! the digest of the query embedding, parameters) is sealed once per attempt, stored durably
//! under `t/<attempt>` and readable after the attempt has expired or the process restarted.
//!
//! It sits at the crate root, beside `handle`, rather than in `memory/`: it is memory's rules
//! run on a running store (its search projection, attempts and backend).

use std::cmp::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use earshot_core::admission::Basis;
use earshot_core::Viewers;

use crate::compose::Snapshot;
use crate::error::{Result, StoreError};
use crate::handle::StoreHandle;
use crate::kernel::backend::key;
use crate::memory::dense::{embedding_digest, EmbeddingSource};
use crate::memory::model::{format_time, limits, ContextCandidate, ContextItem, ContextRequest, RankBy, SealedContext};
use crate::memory::read::{RawDecision, ResolvedContainer};
use crate::memory::search::{ContentSource, Statistics};
use crate::memory::snapshot::{Iid, Pid};

/// Key prefix of sealed contexts (`t/<attempt>`); they are audit records, not part of the index.
pub(crate) const SEALED_PREFIX: u8 = b't';

/// Longest attempt id looked up in the durable records.
pub(crate) const MAX_ATTEMPT_ID: usize = 128;

/// One ranked admissible candidate.
#[derive(Debug, Clone)]
pub struct Ranked {
    pub iid: Iid,
    pub score: f32,
    pub decision: RawDecision,
}

/// The outcome of ranking: how many items were admissible, and the fetch window in rank order.
#[derive(Debug, Clone)]
pub struct Ranking {
    pub candidates: usize,
    pub fetched: Vec<Ranked>,
}

/// The constant `k` of reciprocal rank fusion (`hybrid`): an item at rank `r` of one order
/// adds `1 / (RRF_K + r)`. 60 is the value of Cormack, Clarke and Büttcher (2009).
pub const RRF_K: f64 = 60.0;

/// What the candidates are ranked by: the ranking, the text query (BM25) and the query
/// embedding in its stored form (validated and, under `cosine`, normalised: see
/// [`StoreHandle::query_embedding`]).
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    pub by: RankBy,
    pub text: &'a str,
    pub embedding: Option<&'a [f32]>,
}

impl<'a> Query<'a> {
    /// A BM25 query.
    pub fn bm25(text: &'a str) -> Self {
        Query { by: RankBy::Bm25, text, embedding: None }
    }

    /// A dense query (`embedding` in its stored form).
    pub fn dense(embedding: &'a [f32]) -> Self {
        Query { by: RankBy::Dense, text: "", embedding: Some(embedding) }
    }

    /// A hybrid query (`embedding` in its stored form).
    pub fn hybrid(text: &'a str, embedding: &'a [f32]) -> Self {
        Query { by: RankBy::Hybrid, text, embedding: Some(embedding) }
    }
}

/// Validated context parameters.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    pub fetch: usize,
    pub k: usize,
    pub ranking: RankBy,
}

impl Params {
    /// Checks a request's query, query embedding, ranking and bounds; defaults fetch 20 and
    /// k 5. `bm25` needs `query`, `dense` needs `query_embedding`, `hybrid` needs both; each
    /// takes nothing else. The embedding's dimension is checked against the store's later.
    pub fn of(req: &ContextRequest) -> Result<Params> {
        if req.query.len() > limits::MAX_QUERY_BYTES {
            return Err(StoreError::LimitExceeded { field: "query", limit: limits::MAX_QUERY_BYTES });
        }
        let (text, vector) = match req.ranking {
            RankBy::Bm25 => (true, false),
            RankBy::Dense => (false, true),
            RankBy::Hybrid => (true, true),
        };
        let by = req.ranking.as_str();
        match (text, req.query.trim().is_empty()) {
            (true, true) => return Err(StoreError::input("query", format!("must not be empty (ranking `{by}`)"))),
            (false, false) => {
                return Err(StoreError::input("query", format!("ranking `{by}` takes `query_embedding` alone")))
            }
            _ => {}
        }
        match (vector, req.query_embedding.is_some()) {
            (true, false) => return Err(StoreError::input("query_embedding", format!("ranking `{by}` needs it"))),
            (false, true) => {
                return Err(StoreError::input("query_embedding", "only rankings `dense` and `hybrid` take it"))
            }
            _ => {}
        }
        let fetch = req.fetch.unwrap_or(limits::DEFAULT_FETCH);
        if fetch == 0 || fetch > limits::MAX_FETCH {
            return Err(StoreError::LimitExceeded { field: "fetch", limit: limits::MAX_FETCH });
        }
        let k = req.k.unwrap_or(limits::DEFAULT_K.min(fetch));
        if k == 0 || k > fetch {
            return Err(StoreError::input("k", format!("must be between 1 and the fetch budget ({fetch})")));
        }
        Ok(Params { fetch, k, ranking: req.ranking })
    }
}

/// Content of items read from the durable records, by the names of one snapshot.
struct BackendContent<'a> {
    handle: &'a StoreHandle,
    snapshot: &'a Snapshot,
}

impl BackendContent<'_> {
    /// One field of the content records of items `from..to`, each record parsed as `R`: a view
    /// of the record that names only that field, so the other fields are skipped unparsed
    /// (the BM25 index never parses an embedding's floats, the dense projection never copies
    /// the text).
    fn read<R: serde::de::DeserializeOwned, T>(
        &self,
        from: Iid,
        to: Iid,
        field: impl Fn(R) -> Option<T>,
    ) -> Result<Vec<Option<T>>> {
        let mut out = Vec::with_capacity(to.saturating_sub(from) as usize);
        for iid in from..to {
            let item = self
                .snapshot
                .item(iid)
                .ok_or_else(|| StoreError::Integrity(format!("item #{iid} missing while indexing")))?;
            out.push(self.handle.content_as::<R>(&item.name)?.and_then(&field));
        }
        Ok(out)
    }
}

/// The text of a content record (`c/<item>`), its other fields skipped.
#[derive(serde::Deserialize)]
struct ContentText {
    #[serde(default)]
    content: Option<String>,
}

/// The embedding of a content record, its other fields skipped.
#[derive(serde::Deserialize)]
struct ContentEmbedding {
    #[serde(default)]
    embedding: Option<Vec<f32>>,
}

/// Item contents read from the durable records, by the names of one snapshot.
impl ContentSource for BackendContent<'_> {
    fn contents(&self, from: Iid, to: Iid) -> Result<Vec<Option<String>>> {
        self.read(from, to, |r: ContentText| r.content)
    }
}

/// Embeddings of items read from the durable records, by the names of one snapshot.
impl EmbeddingSource for BackendContent<'_> {
    fn embeddings(&self, from: Iid, to: Iid) -> Result<Vec<Option<Vec<f32>>>> {
        self.read(from, to, |r: ContentEmbedding| r.embedding)
    }
}

impl StoreHandle {
    /// Brings the dense projection up to every item of `snapshot`, waiting at most the
    /// configured `consistency_wait` for a catch-up another thread is running (then
    /// `search_index_lagging`, as for the BM25 index).
    pub fn dense_ready(&self, snapshot: &Snapshot) -> Result<()> {
        self.dense_ready_within(snapshot, self.config().consistency_wait)
    }

    /// [`StoreHandle::dense_ready`] with a wait of its own.
    pub fn dense_ready_within(&self, snapshot: &Snapshot, wait: Duration) -> Result<()> {
        let need = snapshot.item_count() as Iid;
        if self.dense.indexed() >= need {
            return Ok(());
        }
        let latest = self.latest();
        let source = BackendContent { handle: self, snapshot: &latest };
        self.dense.ensure(need, latest.item_count() as Iid, Instant::now() + wait, &source)
    }

    /// Bytes the dense projection holds now.
    pub fn dense_bytes(&self) -> usize {
        self.dense.bytes()
    }

    /// A request's query embedding in its stored form, checked against the store's vector
    /// space at `snapshot` (`embedding_dimension_mismatch`, `invalid_embedding`).
    pub fn query_embedding(&self, snapshot: &Snapshot, v: &[f32]) -> Result<Vec<f32>> {
        crate::memory::dense::prepare_query(v, snapshot.vectors)
    }

    /// Brings the search index up to every item of `snapshot`, waiting at most `wait` for a
    /// rebuild another thread is running.
    pub fn search_ready(&self, snapshot: &Snapshot, wait: Duration) -> Result<()> {
        let need = snapshot.item_count() as Iid;
        if self.search.indexed() >= need {
            return Ok(());
        }
        let latest = self.latest();
        let source = BackendContent { handle: self, snapshot: &latest };
        self.search.ensure(need, latest.item_count() as Iid, Instant::now() + wait, &source)
    }

    /// Checks the search projection against the durable content (part of `verify`).
    pub(crate) fn verify_search(&self) -> Result<String> {
        let latest = self.latest();
        if self.search.indexed() == 0 {
            return Ok("search index not built yet".into());
        }
        self.search_ready(&latest, self.config().consistency_wait)?;
        self.search.agreement(&BackendContent { handle: self, snapshot: &latest })
    }

    /// Checks the dense projection against the durable embeddings (part of `verify`).
    pub(crate) fn verify_dense(&self) -> Result<String> {
        let latest = self.latest();
        if self.dense.indexed() == 0 {
            return Ok("dense projection not built yet".into());
        }
        self.dense_ready(&latest)?;
        self.dense.agreement(&BackendContent { handle: self, snapshot: &latest })
    }

    /// The content digest the search index recorded for an item.
    pub fn indexed_digest(&self, iid: Iid) -> Option<String> {
        self.search.digest(iid)
    }

    /// Ranks the admissible items of `owners` for a container at one snapshot and time: the
    /// exhaustive lookup first, then BM25 over those candidates only, then score descending with
    /// ties broken by item id; the first `fetch`. Nothing is sealed: the endpoint and the
    /// evaluation share this path.
    pub fn rank_admissible(
        &self,
        snapshot: &Snapshot,
        container: &ResolvedContainer,
        owners: &[Pid],
        at_ms: i64,
        query: &str,
        fetch: usize,
    ) -> Result<Ranking> {
        self.rank_admissible_with(snapshot, container, owners, at_ms, query, fetch, Statistics::Candidates)
    }

    /// [`StoreHandle::rank_admissible`] with a choice of BM25 corpus statistics. Only the tests
    /// pass [`Statistics::WholeIndex`]: it is the control that shows selection noninterference
    /// (SPEC §6.1) failing when statistics come from the whole index.
    #[allow(
        clippy::too_many_arguments,
        reason = "the ranking inputs of `rank_admissible` plus the statistics choice of the tests"
    )]
    pub fn rank_admissible_with(
        &self,
        snapshot: &Snapshot,
        container: &ResolvedContainer,
        owners: &[Pid],
        at_ms: i64,
        query: &str,
        fetch: usize,
        statistics: Statistics,
    ) -> Result<Ranking> {
        self.rank_admissible_by_with(snapshot, container, owners, at_ms, Query::bm25(query), fetch, statistics)
    }

    /// [`StoreHandle::rank_admissible`] under any ranking: the exhaustive lookup first, then
    /// the ranking over those candidates only, then score descending with ties by item id.
    pub fn rank_admissible_by(
        &self,
        snapshot: &Snapshot,
        container: &ResolvedContainer,
        owners: &[Pid],
        at_ms: i64,
        query: Query<'_>,
        fetch: usize,
    ) -> Result<Ranking> {
        self.rank_admissible_by_with(snapshot, container, owners, at_ms, query, fetch, Statistics::Candidates)
    }

    /// [`StoreHandle::rank_admissible_by`] with a choice of BM25 statistics (the tests' control).
    #[allow(
        clippy::too_many_arguments,
        reason = "the ranking inputs of `rank_admissible_by` plus the statistics choice of the tests"
    )]
    pub fn rank_admissible_by_with(
        &self,
        snapshot: &Snapshot,
        container: &ResolvedContainer,
        owners: &[Pid],
        at_ms: i64,
        query: Query<'_>,
        fetch: usize,
        statistics: Statistics,
    ) -> Result<Ranking> {
        let (admitted, _) = snapshot.lookup_raw(container, owners, None, usize::MAX, at_ms);
        let candidates: Vec<Iid> = admitted.iter().map(|(iid, _)| *iid).collect();
        let fetched = self
            .rank_candidates_by_with(snapshot, &candidates, query, fetch, statistics)?
            .into_iter()
            .filter_map(|(iid, score)| {
                // `admitted` is in ascending item order, so each decision is found by search.
                let at = admitted.binary_search_by_key(&iid, |(i, _)| *i).ok()?;
                let decision = admitted.get(at)?.1;
                Some(Ranked { iid, score, decision })
            })
            .collect();
        Ok(Ranking { candidates: candidates.len(), fetched })
    }

    /// Ranks an arbitrary candidate set the way [`StoreHandle::rank_admissible`] ranks the
    /// admissible one (for evaluation baselines that choose candidates another way): BM25 with
    /// the statistics of that set, score descending, ties by item id, the first `fetch`.
    pub fn rank_candidates(
        &self,
        snapshot: &Snapshot,
        candidates: &[Iid],
        query: &str,
        fetch: usize,
    ) -> Result<Vec<(Iid, f32)>> {
        self.rank_candidates_with(snapshot, candidates, query, fetch, Statistics::Candidates)
    }

    /// [`StoreHandle::rank_candidates`] with a choice of statistics: the evaluation's unscoped
    /// baseline ranks with the whole index's, as a memory store without authorization would.
    pub fn rank_candidates_with(
        &self,
        snapshot: &Snapshot,
        candidates: &[Iid],
        query: &str,
        fetch: usize,
        statistics: Statistics,
    ) -> Result<Vec<(Iid, f32)>> {
        self.rank_candidates_by_with(snapshot, candidates, Query::bm25(query), fetch, statistics)
    }

    /// [`StoreHandle::rank_candidates`] under any ranking, with a choice of BM25 statistics (the tests' and the
    /// evaluation's control; dense scores have no statistics to choose).
    pub fn rank_candidates_by_with(
        &self,
        snapshot: &Snapshot,
        candidates: &[Iid],
        query: Query<'_>,
        fetch: usize,
        statistics: Statistics,
    ) -> Result<Vec<(Iid, f32)>> {
        let bm25 = |n: usize| -> Result<Vec<(Iid, f32)>> {
            self.search_ready(snapshot, self.config().consistency_wait)?;
            let scored = self.search.score_with(query.text, candidates, statistics)?;
            Ok(order(snapshot, scored, n))
        };
        let dense = |n: usize| -> Result<Vec<(Iid, f32)>> {
            let Some(e) = query.embedding else { return Ok(Vec::new()) };
            self.dense_ready(snapshot)?;
            Ok(order(snapshot, self.dense.score_top(e, candidates, n), n))
        };
        match query.by {
            RankBy::Bm25 => bm25(fetch),
            RankBy::Dense => dense(fetch),
            RankBy::Hybrid => {
                // Whole orders: a rank is a position among every scored candidate.
                let fused = fuse(&[bm25(usize::MAX)?, dense(usize::MAX)?]);
                Ok(order(snapshot, fused, fetch))
            }
        }
    }

    /// Assembles and seals the one context of an attempt. A second request for the same
    /// attempt is refused (`attempt_sealed`): a retry is a new attempt.
    pub fn assemble_context(&self, attempt: &str, req: &ContextRequest) -> Result<SealedContext> {
        let params = Params::of(req)?;
        let a = self.attempt(attempt)?;
        let embedding = match &req.query_embedding {
            Some(v) => Some(self.query_embedding(&a.snapshot, v)?),
            None => None,
        };
        let mut sealed = a.sealed.lock().unwrap_or_else(|p| p.into_inner());
        if sealed.is_some() {
            return Err(StoreError::AttemptSealed(a.id.clone()));
        }
        let snap = &a.snapshot;
        let owners = snap.owner_filter(&a.resolved, &req.owners)?;
        let query = Query { by: params.ranking, text: &req.query, embedding: embedding.as_deref() };
        let ranking = self.rank_admissible_by(snap, &a.resolved, &owners, a.at_ms, query, params.fetch)?;
        let name = |iid: Iid| snap.item(iid).map(|i| i.name.to_string()).unwrap_or_default();
        let mut items = Vec::with_capacity(params.k);
        for (n, r) in ranking.fetched.iter().take(params.k).enumerate() {
            let (basis, grant) = match r.decision.basis {
                Some(Basis::Grant(g)) => ("grant", snap.grant(g).map(|g| g.name.to_string())),
                _ => ("origin", None),
            };
            items.push(ContextItem {
                rank: n + 1,
                item: name(r.iid),
                score: r.score,
                digest: self.search.digest(r.iid),
                basis: basis.into(),
                reason: r.decision.reason.as_str().into(),
                grant,
                content: None,
                role: None,
                author: None,
                data_reason: None,
                untrusted_source: None,
            });
            // SPEC §6.2: every context item carries its role, decided at the attempt's snapshot.
            if let Some(item) = items.last_mut() {
                item.set_role(snap.role_view(r.iid));
            }
        }
        let searched = if req.owners.is_empty() {
            a.resolved.owner.map(|o| vec![snap.part_name(o).to_string()]).unwrap_or_default()
        } else {
            owners.iter().map(|o| snap.part_name(*o).to_string()).collect()
        };
        let mut context = SealedContext {
            attempt: a.id.clone(),
            revision: snap.revision(),
            token: self.token(snap.revision()),
            at: format_time(a.at_ms),
            sealed_at: format_time(self.now_ms()),
            container: a.container.clone(),
            resolved: matches!(a.resolved.viewers, Viewers::Resolved(_)),
            resolution: Some(a.resolved.resolution.clone()),
            owners: searched,
            query: req.query.clone(),
            ranking: params.ranking,
            query_embedding_digest: req.query_embedding.as_deref().map(embedding_digest),
            fetch: params.fetch,
            k: params.k,
            candidates: ranking.candidates,
            fetched: ranking.fetched.iter().map(|r| ContextCandidate { item: name(r.iid), score: r.score }).collect(),
            items,
        };
        // The response carries the content itself; the sealed record keeps only its digest.
        // Contents are read before sealing, so a failed read leaves the attempt unsealed.
        let mut contents = Vec::with_capacity(context.items.len());
        for item in &mut context.items {
            let content = self.content(&item.item)?.and_then(|c| c.content);
            // A dense ranking may run before the BM25 index has read an item: the digest is
            // then that of the content read now (an admissible item's content is its indexed one).
            if item.digest.is_none() {
                item.digest = content.as_deref().map(crate::memory::search::content_digest);
            }
            contents.push(content);
        }
        let bytes = serde_json::to_vec(&context).map_err(|e| StoreError::Storage(format!("encode: {e}")))?;
        // The first context sealed wins, on any replica: an attempt has one context.
        if !self.backend().put_new(self.id(), key(SEALED_PREFIX, &a.id), bytes)? {
            return Err(StoreError::AttemptSealed(a.id.clone()));
        }
        *sealed = Some(Arc::new(context.clone()));
        drop(sealed);
        let mut response = context;
        for (item, content) in response.items.iter_mut().zip(contents) {
            item.content = content;
        }
        Ok(response)
    }

    /// The sealed context of an attempt: from the live attempt, else from the durable record
    /// (after the attempt expired or the process restarted). `None`: never sealed, or unknown.
    pub fn sealed_context(&self, attempt: &str) -> Result<Option<SealedContext>> {
        if let Ok(a) = self.attempt(attempt) {
            if let Some(s) = a.sealed.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
                return Ok(Some(s.as_ref().clone()));
            }
        }
        if attempt.is_empty() || attempt.len() > MAX_ATTEMPT_ID {
            return Ok(None);
        }
        match self.backend().get(self.id(), &key(SEALED_PREFIX, attempt))? {
            Some(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| StoreError::Integrity(format!("sealed context of `{attempt}` is unreadable: {e}"))),
            None => Ok(None),
        }
    }
}

/// Reciprocal rank fusion of whole orders of the same candidates: `Σ 1 / (RRF_K + rank)`,
/// ranks from 1, summed in f64 in the orders' sequence. An item's fused score depends on its
/// ranks alone, and a rank is a position among the candidates.
fn fuse(orders: &[Vec<(Iid, f32)>]) -> Vec<(Iid, f32)> {
    let mut sums: std::collections::BTreeMap<Iid, f64> = std::collections::BTreeMap::new();
    for ordered in orders {
        for (rank, (iid, _)) in ordered.iter().enumerate() {
            *sums.entry(*iid).or_insert(0.0) += 1.0 / (RRF_K + (rank + 1) as f64);
        }
    }
    sums.into_iter().map(|(iid, s)| (iid, s as f32)).collect()
}

/// Score descending, ties by item id (the name), truncated to `fetch`. Each item at most once.
fn order(snapshot: &Snapshot, mut scored: Vec<(Iid, f32)>, fetch: usize) -> Vec<(Iid, f32)> {
    scored.sort_unstable_by_key(|(iid, _)| *iid);
    scored.dedup_by_key(|(iid, _)| *iid);
    if fetch == 0 {
        return Vec::new();
    }
    if scored.len() > fetch {
        // Keep only what can reach the window: every score at least the `fetch`-th largest
        // (ties at the boundary included, so the order by name below is the same as a full
        // sort's). Selection is linear; the sort then runs over about `fetch` items.
        let mut scores: Vec<f32> = scored.iter().map(|(_, s)| *s).collect();
        let (_, nth, _) = scores.select_nth_unstable_by(fetch - 1, |a, b| b.total_cmp(a));
        let threshold = *nth;
        scored.retain(|(_, s)| s.total_cmp(&threshold) != Ordering::Less);
    }
    let name = |iid: Iid| snapshot.item(iid).map(|i| i.name.as_str());
    scored.sort_by(|a, b| match b.1.total_cmp(&a.1) {
        Ordering::Equal => name(a.0).cmp(&name(b.0)),
        other => other,
    });
    scored.truncate(fetch);
    scored
}
