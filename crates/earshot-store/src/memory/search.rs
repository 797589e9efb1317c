//! Full-text projection of item content: a BM25 index (tantivy, in memory) with one document per
//! item, rebuilt from the durable content records and caught up to the items a read needs.
//!
//! The index is never authoritative and never decides admission. It answers one question: the
//! BM25 score of each of a given set of items (the admissible candidates) for a query. Items
//! outside that set are never scored: for each segment, the candidates' documents are visited in
//! order and the query's scorer is advanced to each of them, so no other document reaches a
//! score, a fetch slot or a context slot (SPEC §1.10, slot noninterference).
//!
//! Selection noninterference (SPEC §6.1): BM25's corpus statistics (document count, average
//! length, the document frequency of each query term) are computed over the candidates alone,
//! not over the index, and supplied to tantivy through its `Bm25StatisticsProvider`. So a score
//! is a function of the candidates' documents and nothing else: an item outside the set cannot
//! take a slot, and cannot shift the score or order of the items inside it either. The
//! whole-index statistics remain available as [`Statistics::WholeIndex`] only as the control of
//! the property test that shows the difference; the service never uses them.
//!
//! Revisions: item ids are dense creation numbers, so "every item that exists at revision r" is
//! the prefix `0..item_count(r)`. The index records how long a prefix it holds (`indexed`); a
//! read at r first brings it to at least `item_count(r)`, waiting a bounded time when another
//! thread is already doing that. Documents are never deleted (a deleted item is not current, so
//! never a candidate); with candidate statistics, how much more than the candidates the index
//! holds changes no score.

use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock};
use std::time::Instant;

use rustc_hash::FxHashMap;
use sha2::{Digest as _, Sha256};
use tantivy::query::{Bm25StatisticsProvider, EnableScoring, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Schema, FAST, INDEXED, TEXT};
use tantivy::{DocId, DocSet, Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term, TERMINATED};

use crate::error::{Result, StoreError};
use crate::memory::snapshot::Iid;

/// Bytes of indexing buffer (tantivy's minimum per indexing thread is 15 MB).
const WRITER_HEAP: usize = 32 * 1024 * 1024;
/// Documents added between two commits while catching up (bounds the work before progress shows).
const COMMIT_EVERY: usize = 100_000;
/// A catch-up of at least this many documents ends by merging the index into one segment.
const MERGE_AFTER: Iid = 10_000;

/// The SHA-256 of an item's content, hex; the digest a sealed context records.
pub fn content_digest(content: &str) -> String {
    hex::encode(Sha256::digest(content.as_bytes()))
}

/// Where the index reads content from while catching up: the text of items `from..to`
/// (`None` for an item without content, or whose content was deleted).
pub(crate) trait ContentSource {
    fn contents(&self, from: Iid, to: Iid) -> Result<Vec<Option<String>>>;
}

struct Progress {
    /// Items `0..indexed` are searchable.
    indexed: Iid,
    /// A thread is catching up.
    busy: bool,
}

/// Per segment: item id → document.
type SegmentMap = FxHashMap<Iid, DocId>;

/// Which documents BM25's corpus statistics are computed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statistics {
    /// Over the candidates only (SPEC §6.1): what the service does.
    Candidates,
    /// Over every indexed document: the control of the selection-noninterference property
    /// test (it lets items outside the candidates shift scores). Never used by the service.
    WholeIndex,
}

/// BM25 corpus statistics of one candidate set, for the query's terms (SPEC §6.1). Sums of
/// integers, so they do not depend on how the candidates are spread over segments.
struct CandidateStatistics {
    docs: u64,
    tokens: u64,
    doc_freqs: Vec<(Term, u64)>,
}

impl Bm25StatisticsProvider for CandidateStatistics {
    fn total_num_tokens(&self, _field: Field) -> tantivy::Result<u64> {
        Ok(self.tokens)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.docs)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        // Only the query's own terms are ever asked for; any other term occurs in no candidate
        // as far as these statistics know.
        Ok(self.doc_freqs.iter().find(|(t, _)| t == term).map_or(0, |(_, n)| *n))
    }
}

/// The BM25 index of one store.
pub struct SearchIndex {
    /// The tantivy index, made by the first catch-up or search that needs it: a store that no
    /// context read has reached (most stores of a replica holding many, issue 33) pays only
    /// for the fields below, not for a schema, a RAM directory and a reader (about 3 KiB).
    tantivy: OnceLock<Tantivy>,
    writer: Mutex<Option<IndexWriter<TantivyDocument>>>,
    progress: Mutex<Progress>,
    progress_cv: Condvar,
    /// Content digest of every indexed item (`None`: no content), by item id.
    digests: RwLock<Vec<Option<String>>>,
    /// Item → document maps of the segments seen so far (segments are immutable).
    segment_maps: Mutex<FxHashMap<tantivy::index::SegmentId, Arc<SegmentMap>>>,
}

/// The tantivy side of a [`SearchIndex`], made when first needed.
struct Tantivy {
    index: Index,
    iid_field: Field,
    text_field: Field,
    reader: IndexReader,
}

impl Tantivy {
    fn new() -> Result<Self> {
        let mut schema = Schema::builder();
        let iid_field = schema.add_u64_field("iid", INDEXED | FAST);
        let text_field = schema.add_text_field("text", TEXT);
        let index = Index::create_in_ram(schema.build());
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into().map_err(search_err)?;
        Ok(Tantivy { index, iid_field, text_field, reader })
    }
}

fn search_err(e: impl std::fmt::Display) -> StoreError {
    StoreError::Search(e.to_string())
}

impl SearchIndex {
    /// An empty index; nothing of tantivy is made until it is first used (see the field).
    pub(crate) fn new() -> Result<Self> {
        Ok(SearchIndex {
            tantivy: OnceLock::new(),
            writer: Mutex::new(None),
            progress: Mutex::new(Progress { indexed: 0, busy: false }),
            progress_cv: Condvar::new(),
            digests: RwLock::new(Vec::new()),
            segment_maps: Mutex::new(FxHashMap::default()),
        })
    }

    /// An index of the given contents alone (item `n` holds `contents[n]`): the search
    /// projection a store would have if it held only these items. `earshot eval` ranks against
    /// it to measure how far the documents outside a candidate set move the candidates' scores
    /// (its selection-noninterference column, SPEC §6.1).
    pub fn standalone(contents: Vec<Option<String>>) -> Result<SearchIndex> {
        struct Fixed(Vec<Option<String>>);
        impl ContentSource for Fixed {
            fn contents(&self, from: Iid, to: Iid) -> Result<Vec<Option<String>>> {
                Ok(self.0.get(from as usize..to as usize).map(<[_]>::to_vec).unwrap_or_default())
            }
        }
        let n = Iid::try_from(contents.len()).map_err(|_| StoreError::Search("too many documents".into()))?;
        let index = SearchIndex::new()?;
        // No other thread can be catching up on a fresh index, so the deadline never binds.
        index.ensure(n, n, Instant::now(), &Fixed(contents))?;
        Ok(index)
    }

    /// The tantivy index, made now if this is its first use. Two threads making it at once
    /// each build one and the first stored wins; the other's is dropped unused (nothing is
    /// written to an index before it is stored here).
    fn tantivy(&self) -> Result<&Tantivy> {
        if let Some(t) = self.tantivy.get() {
            return Ok(t);
        }
        let made = Tantivy::new()?;
        let _ = self.tantivy.set(made);
        self.tantivy.get().ok_or_else(|| StoreError::Search("no index".into()))
    }

    /// How many items (a prefix of the item ids) are searchable.
    pub fn indexed(&self) -> Iid {
        lock(&self.progress).indexed
    }

    /// Makes items `0..need` searchable. When no other thread is catching up, this one indexes
    /// up to `target` (at least `need`); otherwise it waits for that thread until `deadline`.
    pub(crate) fn ensure(&self, need: Iid, target: Iid, deadline: Instant, source: &dyn ContentSource) -> Result<()> {
        let mut p = lock(&self.progress);
        loop {
            if p.indexed >= need {
                return Ok(());
            }
            if !p.busy {
                p.busy = true;
                let from = p.indexed;
                drop(p);
                // `catch_up` advances `indexed` after each commit, so a failure part-way keeps
                // what was committed and a retry starts after it (no document is added twice).
                let done = self.catch_up(from, target.max(need), source);
                p = lock(&self.progress);
                p.busy = false;
                self.progress_cv.notify_all();
                done?;
                continue;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(StoreError::SearchLagging { indexed: u64::from(p.indexed), needed: u64::from(need) });
            }
            p = match self.progress_cv.wait_timeout(p, left) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
    }

    /// Indexes items `from..to`, committing every [`COMMIT_EVERY`] documents; returns `to`.
    fn catch_up(&self, from: Iid, to: Iid, source: &dyn ContentSource) -> Result<Iid> {
        let t = self.tantivy()?;
        let mut guard = lock(&self.writer);
        if guard.is_none() {
            *guard = Some(t.index.writer_with_num_threads(1, WRITER_HEAP).map_err(search_err)?);
        }
        let Some(writer) = guard.as_mut() else { return Err(StoreError::Search("no index writer".into())) };
        let mut at = from;
        while at < to {
            let end = to.min(at.saturating_add(COMMIT_EVERY as Iid));
            let chunk = (|| -> Result<Vec<Option<String>>> {
                let texts = source.contents(at, end)?;
                let mut digests = Vec::with_capacity(texts.len());
                for (n, text) in texts.iter().enumerate() {
                    let mut doc = TantivyDocument::default();
                    doc.add_u64(t.iid_field, u64::from(at) + n as u64);
                    if let Some(text) = text {
                        doc.add_text(t.text_field, text);
                    }
                    writer.add_document(doc).map_err(search_err)?;
                    digests.push(text.as_deref().map(content_digest));
                }
                writer.commit().map_err(search_err)?;
                Ok(digests)
            })();
            let digests = match chunk {
                Ok(d) => d,
                Err(e) => {
                    // Nothing of this chunk may stay behind: the next catch-up adds it again.
                    let _ = writer.rollback();
                    return Err(e);
                }
            };
            t.reader.reload().map_err(search_err)?;
            {
                let mut d = self.digests.write().unwrap_or_else(|p| p.into_inner());
                d.truncate(at as usize);
                d.extend(digests);
            }
            lock(&self.progress).indexed = end;
            at = end;
        }
        // A large catch-up (a rebuild) leaves many segments; every query pays per segment, so
        // fold them into one. Small catch-ups leave merging to tantivy's merge policy.
        if to.saturating_sub(from) >= MERGE_AFTER {
            let segments = t.index.searchable_segment_ids().map_err(search_err)?;
            if segments.len() > 1 {
                // The merge is an optimisation: when tantivy's own merge policy has already
                // taken some of these segments (it runs merges of its own after commits), the
                // explicit merge fails and the segments stay as they are, every document in
                // them still searchable. A failed merge must not fail the read that caught up.
                if let Err(e) = writer.merge(&segments).wait() {
                    tracing::debug!(error = %e, "merging the search index after a catch-up failed; its segments stay");
                }
                t.reader.reload().map_err(search_err)?;
            }
        }
        // The writer goes once caught up: it holds threads of its own (indexing and merging)
        // and an arena, which, kept per store, made every store that ever answered a context
        // read cost threads (issue 33). The next catch-up makes a new one.
        *guard = None;
        Ok(to)
    }

    /// The content digest recorded for an indexed item.
    pub fn digest(&self, iid: Iid) -> Option<String> {
        self.digests.read().unwrap_or_else(|p| p.into_inner()).get(iid as usize).cloned().flatten()
    }

    /// The distinct terms of a query, as the index's analyzer produces them.
    fn terms(t: &Tantivy, query: &str) -> Result<Vec<Term>> {
        let mut analyzer = t.index.tokenizer_for_field(t.text_field).map_err(search_err)?;
        let mut stream = analyzer.token_stream(query);
        let mut terms: Vec<Term> = Vec::new();
        while stream.advance() {
            let t = Term::from_field_text(t.text_field, &stream.token().text);
            if !terms.contains(&t) {
                terms.push(t);
            }
        }
        Ok(terms)
    }

    /// BM25 scores, for `query`, of the candidates that match at least one of its terms, with
    /// the corpus statistics of the candidates (SPEC §6.1). Only candidates are ever scored.
    /// `candidates` must all be indexed (see [`SearchIndex::ensure`]).
    pub fn score(&self, query: &str, candidates: &[Iid]) -> Result<Vec<(Iid, f32)>> {
        self.score_with(query, candidates, Statistics::Candidates)
    }

    /// [`SearchIndex::score`] with a choice of corpus statistics (the control of the tests).
    pub fn score_with(&self, query: &str, candidates: &[Iid], statistics: Statistics) -> Result<Vec<(Iid, f32)>> {
        let t = self.tantivy()?;
        let terms = Self::terms(t, query)?;
        if terms.is_empty() || candidates.is_empty() {
            return Ok(Vec::new());
        }
        let searcher = t.reader.searcher();
        // The candidates' documents, per segment, in document order.
        let mut per_segment: Vec<Vec<(DocId, Iid)>> = Vec::with_capacity(searcher.segment_readers().len());
        for segment in searcher.segment_readers() {
            let map = self.segment_map(t, segment)?;
            let mut docs: Vec<(DocId, Iid)> = candidates.iter().filter_map(|i| map.get(i).map(|d| (*d, *i))).collect();
            docs.sort_unstable();
            per_segment.push(docs);
        }
        // One weight and one scorer per query term, summed in the query's term order. Not a
        // `BooleanQuery`: its union scorer adds the terms' scores in an order that changes as
        // posting lists end, and those lists hold documents outside the candidates, so the last
        // bit of a score would depend on them (SPEC §6.1 asks for the same scores, bit for bit).
        let stats;
        let scoring = match statistics {
            Statistics::Candidates => {
                stats = Self::candidate_statistics(t, &searcher, &per_segment, terms.clone())?;
                EnableScoring::enabled_from_statistics_provider(&stats, &searcher)
            }
            Statistics::WholeIndex => EnableScoring::enabled_from_searcher(&searcher),
        };
        let weights = terms
            .into_iter()
            .map(|t| TermQuery::new(t, IndexRecordOption::WithFreqs).weight(scoring))
            .collect::<tantivy::Result<Vec<_>>>()
            .map_err(search_err)?;
        let mut out = Vec::new();
        for (segment, docs) in searcher.segment_readers().iter().zip(&per_segment) {
            if docs.is_empty() {
                continue;
            }
            let mut scorers = weights
                .iter()
                .map(|w| w.scorer(segment, 1.0))
                .collect::<tantivy::Result<Vec<_>>>()
                .map_err(search_err)?;
            for &(doc, iid) in docs {
                let mut total = 0.0f32;
                let mut matched = false;
                for scorer in &mut scorers {
                    let mut at = scorer.doc();
                    if at < doc {
                        at = scorer.seek(doc);
                    }
                    if at == doc {
                        total += scorer.score();
                        matched = true;
                    }
                }
                if matched {
                    out.push((iid, total));
                }
            }
        }
        Ok(out)
    }

    /// Document count, token count and each term's document frequency over the candidates'
    /// documents: a pass over their field norms and, per term, a seek through its postings to
    /// each candidate (both linear in the candidates, not in the index).
    fn candidate_statistics(
        t: &Tantivy,
        searcher: &tantivy::Searcher,
        per_segment: &[Vec<(DocId, Iid)>],
        terms: Vec<Term>,
    ) -> Result<CandidateStatistics> {
        let mut stats =
            CandidateStatistics { docs: 0, tokens: 0, doc_freqs: terms.into_iter().map(|t| (t, 0)).collect() };
        for (segment, docs) in searcher.segment_readers().iter().zip(per_segment) {
            if docs.is_empty() {
                continue;
            }
            stats.docs += docs.len() as u64;
            let norms = segment.get_fieldnorms_reader(t.text_field).map_err(search_err)?;
            stats.tokens += docs.iter().map(|(doc, _)| u64::from(norms.fieldnorm(*doc))).sum::<u64>();
            let inverted = segment.inverted_index(t.text_field).map_err(search_err)?;
            for (term, freq) in &mut stats.doc_freqs {
                let Some(mut postings) = inverted.read_postings(term, IndexRecordOption::Basic).map_err(search_err)?
                else {
                    continue;
                };
                for &(doc, _) in docs {
                    let mut at = postings.doc();
                    if at < doc {
                        at = postings.seek(doc);
                    }
                    if at == TERMINATED {
                        break;
                    }
                    if at == doc {
                        *freq += 1;
                    }
                }
            }
        }
        Ok(stats)
    }

    fn segment_map(&self, t: &Tantivy, segment: &tantivy::SegmentReader) -> Result<Arc<SegmentMap>> {
        let id = segment.segment_id();
        if let Some(m) = lock(&self.segment_maps).get(&id) {
            return Ok(m.clone());
        }
        let column = segment.fast_fields().u64("iid").map_err(search_err)?;
        let mut map = SegmentMap::default();
        map.reserve(segment.max_doc() as usize);
        for doc in 0..segment.max_doc() {
            if let Some(v) = column.first(doc) {
                map.insert(v as Iid, doc);
            }
        }
        let map = Arc::new(map);
        let mut maps = lock(&self.segment_maps);
        // Merged-away segments leave entries behind; forget them all now and then.
        if maps.len() > 4 * searcher_segments(&t.reader).max(8) {
            maps.clear();
        }
        maps.insert(id, map.clone());
        Ok(map)
    }

    /// Checks the index against the durable content: one document per item of `0..indexed`,
    /// and every recorded digest equal to the digest of the content now on disk (an item whose
    /// content was deleted since it was indexed is allowed to keep its old digest).
    pub(crate) fn agreement(&self, source: &dyn ContentSource) -> Result<String> {
        let indexed = self.indexed();
        let searcher = self.tantivy()?.reader.searcher();
        let mut seen = vec![false; indexed as usize];
        let mut docs = 0u64;
        for segment in searcher.segment_readers() {
            let column = segment.fast_fields().u64("iid").map_err(search_err)?;
            for doc in 0..segment.max_doc() {
                docs += 1;
                let iid = column.first(doc).ok_or_else(|| search_err(format!("document {doc} has no item")))?;
                match seen.get_mut(iid as usize) {
                    Some(s) if !*s => *s = true,
                    Some(_) => return Err(search_err(format!("item #{iid} is indexed twice"))),
                    None => return Err(search_err(format!("item #{iid} is indexed but beyond {indexed}"))),
                }
            }
        }
        if let Some(missing) = seen.iter().position(|s| !s) {
            return Err(search_err(format!("item #{missing} is not indexed")));
        }
        let digests = self.digests.read().unwrap_or_else(|p| p.into_inner()).clone();
        let contents = source.contents(0, indexed)?;
        for (iid, (now, recorded)) in contents.iter().zip(&digests).enumerate() {
            if let Some(text) = now {
                if recorded.as_deref() != Some(content_digest(text).as_str()) {
                    return Err(search_err(format!("item #{iid}: indexed digest differs from its content")));
                }
            }
        }
        Ok(format!("search index: {docs} documents"))
    }
}

fn searcher_segments(reader: &IndexReader) -> usize {
    reader.searcher().segment_readers().len()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::time::Duration;

    /// Items `0..n` with text `word{i}`; fails once when asked for `fail_at`.
    struct Source {
        fail_at: Cell<Option<Iid>>,
    }

    impl ContentSource for Source {
        fn contents(&self, from: Iid, to: Iid) -> Result<Vec<Option<String>>> {
            if let Some(f) = self.fail_at.get() {
                if (from..to).contains(&f) {
                    self.fail_at.set(None);
                    return Err(StoreError::Storage("disk hiccup".into()));
                }
            }
            Ok((from..to).map(|i| (i % 3 != 0).then(|| format!("shared word{i}"))).collect())
        }
    }

    fn later() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    #[test]
    fn only_candidates_are_scored_and_a_failed_catch_up_adds_nothing_twice() {
        let index = SearchIndex::new().expect("index");
        let source = Source { fail_at: Cell::new(Some(7)) };
        assert!(index.ensure(10, 10, later(), &source).is_err(), "the first catch-up fails");
        assert_eq!(index.indexed(), 0, "nothing of the failed chunk counts");
        index.ensure(10, 10, later(), &source).expect("the retry succeeds");
        assert_eq!(index.indexed(), 10);
        index.agreement(&source).expect("one document per item, digests agree");
        // Items 0, 3, 6, 9 have no content and match nothing; only candidates are scored.
        let scored = index.score("shared", &[1, 2, 3, 4]).expect("score");
        let ids: Vec<Iid> = scored.iter().map(|(i, _)| *i).collect();
        assert_eq!(ids, [1, 2, 4]);
        assert_eq!(index.score("word5", &[1, 2, 4]).expect("score"), []);
        assert_eq!(index.score("word5", &[5]).expect("score").len(), 1);
        assert_eq!(index.digest(1), Some(content_digest("shared word1")));
        assert_eq!(index.digest(3), None);
        // A wrong digest is reported.
        index.digests.write().expect("lock")[1] = Some(content_digest("tampered"));
        assert!(index.agreement(&source).is_err());
    }
}
