//! Dense recall: item embeddings, the store's vector space (dimension and metric), their
//! validation and normalisation, exact vectorised scoring, and the in-memory projection that
//! scores admissible candidates (an arena of f32 rows indexed by item).
//!
//! An embedding is durable like content: it lives in the item's content record (`c/<item>`),
//! so it is exported, imported, replicated and removed with the item by the paths content
//! already takes, and it is never returned by a read (only an export, an administrator's, holds
//! it). The store's vector space is fixed by its first embedding and recorded once (`v/space`),
//! so every replica and every rebuild refuses the same later writes.
//!
//! Under `cosine` an embedding is normalised when written (and a query when asked), so every
//! score is one dot product. A score depends on the query and the one item alone (SPEC §6.1):
//! no statistic of other items enters it, so an item outside the candidates can shift neither a
//! candidate's score nor its rank.
//!
//! The projection is built lazily from the durable records, like the BM25 index (`search`),
//! rather than maintained by the writer: a store that never answers a dense context pays nothing
//! for it (most stores of a replica holding many, issue 33), the writer's group commit stays as
//! it is, and the records stay the only truth (the projection can always be dropped and read
//! again). Items `0..indexed` are in it; a read first brings it up to its snapshot's items.

use std::sync::{Mutex, RwLock, TryLockError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::error::{Result, StoreError};
use crate::memory::model::{limits::MAX_EMBEDDING_DIMENSION, Metric};
use crate::memory::snapshot::Iid;

mod quantised;
use quantised::{quantise_row, QuantisedQuery, RowBound};

/// Key prefix of the vector-space record (`v/space`).
pub(crate) const SPACE_PREFIX: u8 = b'v';
/// The one key under [`SPACE_PREFIX`].
pub(crate) const SPACE_KEY: &str = "space";

/// The largest magnitude of one component of an embedding. With at most
/// [`MAX_EMBEDDING_DIMENSION`] components, no dot product can overflow an f32.
pub const MAX_COMPONENT: f32 = 1.0e6;

/// The dimension and metric every embedding of a store has, fixed by its first embedding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VectorSpace {
    pub dimension: u32,
    pub metric: Metric,
}

/// Checks the shape and values of an embedding: not empty, at most
/// [`MAX_EMBEDDING_DIMENSION`] long, every component finite and within [`MAX_COMPONENT`].
fn check_values(field: &'static str, v: &[f32]) -> Result<()> {
    if v.is_empty() {
        return Err(StoreError::InvalidEmbedding { field, message: "must not be empty".into() });
    }
    if v.len() > MAX_EMBEDDING_DIMENSION {
        return Err(StoreError::InvalidEmbedding {
            field,
            message: format!("has {} dimensions; at most {MAX_EMBEDDING_DIMENSION} are allowed", v.len()),
        });
    }
    if let Some(at) = v.iter().position(|x| !x.is_finite() || x.abs() > MAX_COMPONENT) {
        return Err(StoreError::InvalidEmbedding {
            field,
            message: format!("component {at} is not a finite number within ±{MAX_COMPONENT}"),
        });
    }
    Ok(())
}

/// `v` scaled to unit length (the norm computed in f64); a zero vector has no direction.
fn normalised(field: &'static str, v: &[f32]) -> Result<Vec<f32>> {
    let norm = v.iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt();
    if norm == 0.0 || !norm.is_finite() {
        return Err(StoreError::InvalidEmbedding { field, message: "a zero vector has no cosine similarity".into() });
    }
    Ok(v.iter().map(|x| (f64::from(*x) / norm) as f32).collect())
}

/// Validates an item's embedding against the store's space (`None`: no embedding yet, this one
/// fixes it, under `metric` or `cosine`) and returns the space and the vector to store
/// (normalised under `cosine`).
pub(crate) fn prepare_item(
    v: &[f32],
    metric: Option<Metric>,
    space: Option<VectorSpace>,
) -> Result<(VectorSpace, Vec<f32>)> {
    const FIELD: &str = "embedding";
    check_values(FIELD, v)?;
    let space = match space {
        Some(s) => {
            if v.len() != s.dimension as usize {
                return Err(StoreError::EmbeddingDimensionMismatch {
                    field: FIELD,
                    expected: s.dimension as usize,
                    got: v.len(),
                });
            }
            if let Some(m) = metric.filter(|m| *m != s.metric) {
                return Err(StoreError::InvalidEmbedding {
                    field: "embedding_metric",
                    message: format!(
                        "this store's embeddings are compared by `{}`, not `{}`",
                        s.metric.as_str(),
                        m.as_str()
                    ),
                });
            }
            s
        }
        None => VectorSpace {
            // At most MAX_EMBEDDING_DIMENSION, checked above.
            dimension: u32::try_from(v.len()).unwrap_or(u32::MAX),
            metric: metric.unwrap_or(Metric::Cosine),
        },
    };
    let stored = match space.metric {
        Metric::Cosine => normalised(FIELD, v)?,
        Metric::Dot => v.to_vec(),
    };
    Ok((space, stored))
}

/// Validates a query embedding against the store's space and returns the vector to score with
/// (normalised under `cosine`). A store without embeddings takes any well-formed query (it
/// scores no item).
pub(crate) fn prepare_query(v: &[f32], space: Option<VectorSpace>) -> Result<Vec<f32>> {
    const FIELD: &str = "query_embedding";
    check_values(FIELD, v)?;
    match space {
        Some(s) if v.len() != s.dimension as usize => {
            Err(StoreError::EmbeddingDimensionMismatch { field: FIELD, expected: s.dimension as usize, got: v.len() })
        }
        Some(VectorSpace { metric: Metric::Cosine, .. }) => normalised(FIELD, v),
        _ => Ok(v.to_vec()),
    }
}

/// SHA-256 (hex) of a vector as little-endian f32s: what a sealed context keeps of its query
/// embedding.
pub fn embedding_digest(v: &[f32]) -> String {
    let mut h = Sha256::new();
    for x in v {
        h.update(x.to_le_bytes());
    }
    hex::encode(h.finalize())
}

/// Lanes of [`dot`]: eight independent accumulators, which the compiler keeps in vector
/// registers (two SSE registers on the baseline x86-64 target, one AVX register with AVX).
const LANES: usize = 8;

/// The dot product of two vectors of the same length: eight independent partial sums over
/// arrays of eight (vectorised by the compiler, no bounds checks: each chunk is a `[f32; 8]`;
/// no `unsafe`, no intrinsics), then the tail, then a fixed pairwise reduction. The result
/// depends on the two vectors alone, bit for bit. One accumulator instead is about 3× slower
/// (`benches/dense.rs`).
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        // Always eight (`chunks_exact`); as arrays, the loop below has no bounds checks.
        let (Ok(x), Ok(y)) = (<&[f32; LANES]>::try_from(x), <&[f32; LANES]>::try_from(y)) else { continue };
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    let mut tail = 0.0f32;
    for (x, y) in ra.iter().zip(rb) {
        tail += x * y;
    }
    let [a0, a1, a2, a3, a4, a5, a6, a7] = acc;
    ((a0 + a4) + (a1 + a5)) + ((a2 + a6) + (a3 + a7)) + tail
}

/// Where the projection reads embeddings from while catching up: those of items `from..to`
/// (`None` for an item without one, or whose content was deleted).
pub(crate) trait EmbeddingSource {
    fn embeddings(&self, from: Iid, to: Iid) -> Result<Vec<Option<Vec<f32>>>>;
}

/// No row: the item has no embedding.
const NO_ROW: u32 = u32::MAX;

#[derive(Debug, Default)]
struct Arena {
    /// Items `0..indexed` have been read.
    indexed: Iid,
    /// The dimension of every row (0 until the first embedding is read).
    dimension: usize,
    /// Item → row, [`NO_ROW`] for an item without an embedding.
    rows: Vec<u32>,
    /// The rows, contiguous: row `r` is `data[r * dimension..(r + 1) * dimension]`.
    data: Vec<f32>,
    /// The rows' int8 codes, laid out as `data` ([`quantised`]).
    codes: Vec<i8>,
    /// Row `r`'s bound on the error of its codes.
    bounds: Vec<RowBound>,
}

impl Arena {
    fn row(&self, iid: Iid) -> Option<&[f32]> {
        let r = *self.rows.get(iid as usize)?;
        if r == NO_ROW {
            return None;
        }
        let at = r as usize * self.dimension;
        self.data.get(at..at + self.dimension)
    }

    fn codes(&self, iid: Iid) -> Option<(&[i8], &RowBound)> {
        let r = *self.rows.get(iid as usize)?;
        if r == NO_ROW {
            return None;
        }
        let at = r as usize * self.dimension;
        Some((self.codes.get(at..at + self.dimension)?, self.bounds.get(r as usize)?))
    }
}

/// Items read from the records between two publications of the arena.
const CHUNK: Iid = 10_000;

/// The dense projection of one store: every embedding in one contiguous f32 arena.
#[derive(Debug, Default)]
pub struct DenseIndex {
    arena: RwLock<Arena>,
    /// Held by the one thread catching up; others wait for it (bounded), then find the work
    /// done.
    catching_up: Mutex<()>,
}

impl DenseIndex {
    /// An empty projection (nothing is allocated until a dense read needs it).
    pub(crate) fn new() -> Self {
        DenseIndex::default()
    }

    /// A projection of the given embeddings alone (item `n` holds `embeddings[n]`, already in
    /// the form stored: normalised under `cosine`), for benches and evaluations.
    pub fn standalone(embeddings: Vec<Option<Vec<f32>>>) -> Result<DenseIndex> {
        struct Fixed(Vec<Option<Vec<f32>>>);
        impl EmbeddingSource for Fixed {
            fn embeddings(&self, from: Iid, to: Iid) -> Result<Vec<Option<Vec<f32>>>> {
                Ok(self.0.get(from as usize..to as usize).map(<[_]>::to_vec).unwrap_or_default())
            }
        }
        let n = Iid::try_from(embeddings.len()).map_err(|_| StoreError::Search("too many embeddings".into()))?;
        let index = DenseIndex::new();
        // No other thread can be catching up on a fresh projection: the deadline never binds.
        index.ensure(n, n, Instant::now(), &Fixed(embeddings))?;
        Ok(index)
    }

    /// How many items (a prefix of the item ids) have been read.
    pub fn indexed(&self) -> Iid {
        self.arena.read().unwrap_or_else(|p| p.into_inner()).indexed
    }

    /// Bytes the arena holds (rows and the item → row table).
    pub fn bytes(&self) -> usize {
        let a = self.arena.read().unwrap_or_else(|p| p.into_inner());
        a.data.capacity() * std::mem::size_of::<f32>()
            + a.rows.capacity() * std::mem::size_of::<u32>()
            + a.codes.capacity()
            + a.bounds.capacity() * std::mem::size_of::<RowBound>()
    }

    /// Brings the projection up to at least items `0..need` (up to `target` when this thread
    /// does the work), reading the records of the items not yet read. While another thread is
    /// catching up, waits for it until `deadline`, then answers `search_index_lagging`. A
    /// failure part-way keeps what was published; a retry starts after it.
    pub(crate) fn ensure(&self, need: Iid, target: Iid, deadline: Instant, source: &dyn EmbeddingSource) -> Result<()> {
        if self.indexed() >= need {
            return Ok(());
        }
        let _one = loop {
            match self.catching_up.try_lock() {
                Ok(g) => break g,
                Err(TryLockError::Poisoned(p)) => break p.into_inner(),
                Err(TryLockError::WouldBlock) => {
                    let indexed = self.indexed();
                    if indexed >= need {
                        return Ok(());
                    }
                    if Instant::now() >= deadline {
                        return Err(StoreError::SearchLagging { indexed: u64::from(indexed), needed: u64::from(need) });
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
        };
        let end = target.max(need);
        let mut from = self.indexed();
        while from < end {
            let to = end.min(from.saturating_add(CHUNK));
            let got = source.embeddings(from, to)?;
            let mut a = self.arena.write().unwrap_or_else(|p| p.into_inner());
            let (rows_before, data_before, bounds_before) = (a.rows.len(), a.data.len(), a.bounds.len());
            // Exactly what this chunk adds: the arena holds no slack beyond one chunk's rows.
            let adding: usize = got.iter().flatten().map(Vec::len).sum();
            a.data.reserve_exact(adding);
            a.codes.reserve_exact(adding);
            a.bounds.reserve_exact(got.iter().flatten().count());
            a.rows.reserve_exact(got.len());
            let mut bad = None;
            for (n, e) in got.into_iter().enumerate() {
                let row = match e {
                    Some(v) => {
                        if a.dimension == 0 {
                            a.dimension = v.len();
                        }
                        if v.len() != a.dimension || v.is_empty() {
                            bad = Some(u64::from(from) + n as u64);
                            break;
                        }
                        let r = u32::try_from(a.data.len() / a.dimension).unwrap_or(NO_ROW);
                        a.data.extend_from_slice(&v);
                        let bound = quantise_row(&v, &mut a.codes);
                        a.bounds.push(bound);
                        r
                    }
                    None => NO_ROW,
                };
                a.rows.push(row);
            }
            if let Some(iid) = bad {
                a.rows.truncate(rows_before);
                a.data.truncate(data_before);
                a.codes.truncate(data_before);
                a.bounds.truncate(bounds_before);
                if a.data.is_empty() {
                    a.dimension = 0;
                }
                return Err(StoreError::Integrity(format!("item #{iid}: its embedding has another dimension")));
            }
            a.rows.resize(to as usize, NO_ROW);
            a.indexed = to;
            from = to;
        }
        Ok(())
    }

    /// Checks the projection against the durable records (part of `verify`): every item read
    /// whose record holds an embedding has exactly that row. An item whose record holds none
    /// is not checked: its content may have been deleted after it was read, and a deleted item
    /// is never a candidate again (it is not current).
    pub(crate) fn agreement(&self, source: &dyn EmbeddingSource) -> Result<String> {
        let a = self.arena.read().unwrap_or_else(|p| p.into_inner());
        let stored = source.embeddings(0, a.indexed)?;
        let mut rows = 0usize;
        for (iid, embedding) in stored.iter().enumerate() {
            let Some(v) = embedding else { continue };
            if a.row(iid as Iid) != Some(v.as_slice()) {
                return Err(StoreError::Integrity(format!(
                    "item #{iid}: the dense projection differs from the embedding in its record"
                )));
            }
            let mut codes = Vec::with_capacity(v.len());
            let bound = quantise_row(v, &mut codes);
            if a.codes(iid as Iid) != Some((codes.as_slice(), &bound)) {
                return Err(StoreError::Integrity(format!(
                    "item #{iid}: the dense projection's int8 codes differ from its embedding's"
                )));
            }
            rows += 1;
        }
        Ok(format!("dense projection: {rows} embeddings"))
    }

    /// The dense score of each candidate that has an embedding: the dot product of its row with
    /// `query` (already in the stored form). Only candidates are read; the scores of other items
    /// are never computed. `candidates` must all be read (see [`DenseIndex::ensure`]).
    pub fn score(&self, query: &[f32], candidates: &[Iid]) -> Vec<(Iid, f32)> {
        let a = self.arena.read().unwrap_or_else(|p| p.into_inner());
        if a.dimension != query.len() {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(candidates.len());
        for &iid in candidates {
            if let Some(row) = a.row(iid) {
                out.push((iid, dot(query, row)));
            }
        }
        out
    }

    /// The candidates that may rank among the first `fetch` by dense score, each with its exact
    /// score ([`DenseIndex::score`]'s, bit for bit): a superset of those whose score is at least
    /// the `fetch`-th largest, so ordering these and keeping `fetch` gives exactly what ordering
    /// every scored candidate would. Reads the rows' int8 codes, and the f32 rows of only the
    /// few candidates near the cut ([`quantised`]).
    pub fn score_top(&self, query: &[f32], candidates: &[Iid], fetch: usize) -> Vec<(Iid, f32)> {
        self.score_top_from(query, candidates, fetch, EXACT_BELOW)
    }

    /// [`DenseIndex::score_top`], scanning the codes only when more than `exact_below`
    /// candidates (and more than four times `fetch`) are given (the tests lower it).
    fn score_top_from(&self, query: &[f32], candidates: &[Iid], fetch: usize, exact_below: usize) -> Vec<(Iid, f32)> {
        if fetch == 0 {
            return Vec::new();
        }
        if candidates.len() <= exact_below.max(fetch.saturating_mul(4)) {
            return self.score(query, candidates);
        }
        let a = self.arena.read().unwrap_or_else(|p| p.into_inner());
        if a.dimension != query.len() {
            return Vec::new();
        }
        // The cut counts candidates, so each must count once.
        let unique: std::borrow::Cow<'_, [Iid]> = if candidates.windows(2).all(|w| w[0] < w[1]) {
            candidates.into()
        } else {
            let mut c = candidates.to_vec();
            c.sort_unstable();
            c.dedup();
            c.into()
        };
        let q = QuantisedQuery::new(query);
        quantised::may_reach(&q, &unique, fetch, |iid| a.codes(iid))
            .into_iter()
            .filter_map(|iid| Some((iid, dot(query, a.row(iid)?))))
            .collect()
    }
}

/// Below this many candidates [`DenseIndex::score_top`] scores every one in f32: the codes save
/// nothing on a set this small.
const EXACT_BELOW: usize = 1024;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    fn naive(a: &[f32], b: &[f32]) -> f64 {
        a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum()
    }

    #[test]
    fn the_agreement_check_finds_a_row_that_differs_from_its_record() {
        let records = vec![Some(vec![1.0, 0.0]), None, Some(vec![0.6, 0.8])];
        let index = DenseIndex::standalone(records.clone()).unwrap();
        struct Fixed(Vec<Option<Vec<f32>>>);
        impl EmbeddingSource for Fixed {
            fn embeddings(&self, from: Iid, to: Iid) -> Result<Vec<Option<Vec<f32>>>> {
                Ok(self.0[from as usize..to as usize].to_vec())
            }
        }
        assert_eq!(index.agreement(&Fixed(records.clone())).unwrap(), "dense projection: 2 embeddings");
        // A deleted item's record holds nothing: not checked.
        let deleted = vec![None, None, Some(vec![0.6, 0.8])];
        assert!(index.agreement(&Fixed(deleted)).is_ok());
        let changed = vec![Some(vec![1.0, 0.0]), None, Some(vec![0.8, 0.6])];
        assert_eq!(index.agreement(&Fixed(changed)).unwrap_err().code(), "integrity_failure");
        let added = vec![Some(vec![1.0, 0.0]), Some(vec![0.0, 1.0]), Some(vec![0.6, 0.8])];
        assert_eq!(index.agreement(&Fixed(added)).unwrap_err().code(), "integrity_failure");
        // A row whose int8 codes no longer match it.
        index.arena.write().unwrap().codes[3] ^= 1;
        let err = index.agreement(&Fixed(records)).unwrap_err();
        assert!(err.to_string().contains("int8 codes"), "{err}");
    }

    #[test]
    fn dot_agrees_with_the_naive_sum() {
        for n in [1usize, 7, 8, 9, 64, 383, 384] {
            let a: Vec<f32> = (0..n).map(|i| ((i * 37 % 11) as f32 - 5.0) / 7.0).collect();
            let b: Vec<f32> = (0..n).map(|i| ((i * 13 % 17) as f32 - 8.0) / 3.0).collect();
            let d = f64::from(dot(&a, &b));
            assert!((d - naive(&a, &b)).abs() < 1e-3 * (1.0 + naive(&a, &b).abs()), "n = {n}");
        }
    }

    #[test]
    fn embeddings_are_validated_and_cosine_normalised() {
        let (space, v) = prepare_item(&[3.0, 4.0], None, None).unwrap();
        assert_eq!(space, VectorSpace { dimension: 2, metric: Metric::Cosine });
        assert_eq!(v, [0.6, 0.8]);
        let code = |r: Result<(VectorSpace, Vec<f32>)>| r.map(|_| ()).unwrap_err().code();
        assert_eq!(code(prepare_item(&[1.0, 2.0, 3.0], None, Some(space))), "embedding_dimension_mismatch");
        assert_eq!(code(prepare_item(&[f32::INFINITY, 1.0], None, Some(space))), "invalid_embedding");
        assert_eq!(code(prepare_item(&[f32::NAN, 1.0], None, None)), "invalid_embedding");
        assert_eq!(code(prepare_item(&[0.0, 0.0], None, Some(space))), "invalid_embedding");
        assert_eq!(code(prepare_item(&[], None, None)), "invalid_embedding");
        assert_eq!(code(prepare_item(&[2e6], None, None)), "invalid_embedding");
        assert_eq!(code(prepare_item(&vec![1.0; MAX_EMBEDDING_DIMENSION + 1], None, None)), "invalid_embedding");
        assert_eq!(code(prepare_item(&[1.0, 1.0], Some(Metric::Dot), Some(space))), "invalid_embedding");
        let (dot_space, raw) = prepare_item(&[3.0, 4.0], Some(Metric::Dot), None).unwrap();
        assert_eq!((dot_space.metric, raw), (Metric::Dot, vec![3.0, 4.0]));
        assert_eq!(prepare_query(&[0.0, 2.0], Some(space)).unwrap(), [0.0, 1.0]);
        assert_eq!(prepare_query(&[1.0], Some(space)).unwrap_err().code(), "embedding_dimension_mismatch");
        assert_eq!(prepare_query(&[1.0, 2.0, 3.0], None).unwrap().len(), 3);
    }

    #[test]
    fn only_candidates_with_embeddings_are_scored() {
        let index =
            DenseIndex::standalone(vec![Some(vec![1.0, 0.0]), None, Some(vec![0.0, 1.0]), Some(vec![0.6, 0.8])])
                .unwrap();
        assert_eq!(index.indexed(), 4);
        assert_eq!(index.score(&[1.0, 0.0], &[0, 1, 3]), vec![(0, 1.0), (3, 0.6)]);
        assert_eq!(index.score(&[1.0, 0.0, 0.0], &[0, 1, 3]), vec![], "another dimension scores nothing");
        let bad = DenseIndex::standalone(vec![Some(vec![1.0, 0.0]), Some(vec![1.0])]);
        assert!(bad.is_err(), "rows of two dimensions are refused");
    }

    /// The first `fetch` of scored candidates: score descending, ties by item, each item once.
    fn window(mut scored: Vec<(Iid, f32)>, fetch: usize) -> Vec<(Iid, u32)> {
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.dedup_by_key(|(iid, _)| *iid);
        scored.truncate(fetch);
        scored.into_iter().map(|(iid, s)| (iid, s.to_bits())).collect()
    }

    /// Rows of one kind: spread, few distinct values (ties and duplicate rows), a tight cluster
    /// (near-ties), huge or tiny magnitudes (`dot` stores them as given).
    fn arena_rows(seed: u64, kind: u8, dimension: usize, n: usize) -> Vec<Option<Vec<f32>>> {
        let mut next = quantised::tests::uniform(seed);
        let centre: Vec<f32> = (0..dimension).map(|_| next()).collect();
        (0..n)
            .map(|_| {
                if next() > 0.9 {
                    return None;
                }
                Some(
                    (0..dimension)
                        .map(|i| match kind {
                            0 => next(),
                            1 => (next() * 2.0).round() / 2.0,
                            2 => centre[i] + next() * 1.0e-4,
                            3 => next() * MAX_COMPONENT,
                            _ => next() * 1.0e-20,
                        })
                        .collect(),
                )
            })
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

        /// The int8 scan returns exactly the exact scan's window: same items, same order, same
        /// scores to the bit, on arenas full of ties, near-ties, duplicates and extreme
        /// magnitudes, with candidates repeated and out of order.
        #[test]
        fn the_int8_scan_keeps_the_exact_window(
            seed in proptest::prelude::any::<u64>(),
            kind in 0u8..5,
            dimension in 1usize..48,
            n in 1usize..400,
            fetch in 1usize..16,
            picks in proptest::collection::vec(0usize..400, 0..500),
            query_kind in 0u8..5,
        ) {
            let rows = arena_rows(seed, kind, dimension, n);
            let index = DenseIndex::standalone(rows.clone()).unwrap();
            let query = arena_rows(seed.rotate_left(17), query_kind, dimension, 1)
                .pop().flatten().unwrap_or_else(|| vec![1.0; dimension]);
            let candidates: Vec<Iid> = picks.iter().map(|p| (p % n) as Iid).collect();
            let exact = window(index.score(&query, &candidates), fetch);
            let scanned = window(index.score_top_from(&query, &candidates, fetch, 0), fetch);
            proptest::prop_assert_eq!(scanned, exact);
        }
    }
}
