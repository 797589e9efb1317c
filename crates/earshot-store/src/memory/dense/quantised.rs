//! The 8-bit shadow of the dense projection: every row also kept as int8 codes with a proven
//! bound on their error, so that a top-`fetch` scan reads a quarter of the bytes and still
//! returns exactly what the exact f32 scan would rank first.
//!
//! The scan scores each candidate with an integer dot product of its codes and the query's
//! codes, which gives an interval certain to hold the candidate's exact f32 score. Every
//! candidate whose interval reaches the `fetch`-th largest lower end is scored again in f32.
//! That set holds every candidate whose exact score is at least the `fetch`-th largest exact
//! score (ties included): at least `fetch` candidates score at least that cut, so the
//! `fetch`-th largest exact score is at least the cut, and a candidate reaching it has an
//! upper end reaching it. So the window and its order, ties by name included, are those of
//! the exact scan, bit for bit (`tests` checks it against the exact scan on random arenas).
//!
//! The bound, for a row `r = s·c + e` (codes `c`, step `s`, `|eᵢ| ≤ E`) and a query
//! `q = t·d + f` (`|fᵢ| ≤ F`): the real dot product is `s·t·(c·d) + e·q + s·(c·f)`, so it is
//! within `E·‖q‖₁ + s·‖c‖₁·F` of the integer estimate; the f32 dot product (`super::dot`:
//! every product summed through at most `n + 16` roundings) is within `γₙ₊₁₆·‖r‖₂·‖q‖₂` of the
//! real one. The bound is computed in f64 from each row's measured error, rounded up, and
//! widened once more for the f64 arithmetic that computes it.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// Largest row code: components in `-127..=127`.
const ROW_LEVELS: f64 = 127.0;
/// Largest query code: `-2047..=2047` (11 bits). A product is at most 127 × 2047, so at most
/// 4096 dimensions ([`crate::memory::model::limits::MAX_EMBEDDING_DIMENSION`]) sum to
/// 1.07 × 10⁹, inside an i32 lane; and the query's own error is a sixteenth of a row's.
const QUERY_LEVELS: f64 = 2047.0;
/// Unit roundoff of f32.
const F32_UNIT: f64 = 1.0 / (1u64 << 24) as f64;
/// The relative widening of every bound, for the f64 arithmetic that computes it (far above
/// its few roundings of 2⁻⁵³ each).
const WIDEN: f64 = 1.0 + 1.0 / (1u64 << 20) as f64;
/// An absolute floor under every bound: covers products that fall into f32's subnormal range,
/// whose rounding is absolute (2⁻¹⁴⁹ each, ≤ 4112 of them), not relative.
const FLOOR: f64 = 1.0e-38;

/// What the scan needs to bound one row's exact score from its codes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct RowBound {
    /// The step of the codes: the row is about `step × code`.
    step: f32,
    /// At least the largest error of one component: `max |rᵢ − step·cᵢ|`.
    error: f32,
    /// At least `step · Σ|cᵢ|`.
    scaled_l1: f32,
    /// At least `‖r‖₂`.
    norm: f32,
}

/// `x` rounded up to an f32 (for the non-negative quantities of a bound).
fn up(x: f64) -> f32 {
    let y = x as f32;
    if f64::from(y) < x {
        y.next_up()
    } else {
        y
    }
}

/// Appends the codes of `row` to `codes` and returns its bound.
pub(super) fn quantise_row(row: &[f32], codes: &mut Vec<i8>) -> RowBound {
    let largest = row.iter().fold(0.0f64, |m, x| m.max(f64::from(x.abs())));
    let step = (largest / ROW_LEVELS) as f32;
    let (mut error, mut l1) = (0.0f64, 0.0f64);
    codes.reserve(row.len());
    for x in row {
        let x = f64::from(*x);
        let code = if step > 0.0 { (x / f64::from(step)).round().clamp(-ROW_LEVELS, ROW_LEVELS) } else { 0.0 };
        // Exact in f64: an f32 step times an integer below 2⁸.
        error = error.max((x - f64::from(step) * code).abs());
        l1 += code.abs();
        codes.push(code as i8);
    }
    let norm = row.iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt();
    RowBound { step, error: up(error * WIDEN), scaled_l1: up(f64::from(step) * l1 * WIDEN), norm: up(norm * WIDEN) }
}

/// A query prepared for the scan: its codes and what bounds their error.
#[derive(Debug)]
pub(super) struct QuantisedQuery {
    codes: Vec<i16>,
    /// The step of the codes (an f32, so `step × code` is exact in f64).
    step: f64,
    /// `max |qᵢ − step·dᵢ|`.
    error: f64,
    /// `‖q‖₁` and `‖q‖₂`.
    l1: f64,
    norm: f64,
    /// `γ` of the f32 dot product over this many dimensions.
    gamma: f64,
}

impl QuantisedQuery {
    pub(super) fn new(query: &[f32]) -> QuantisedQuery {
        let largest = query.iter().fold(0.0f64, |m, x| m.max(f64::from(x.abs())));
        let step = f64::from((largest / QUERY_LEVELS) as f32);
        let mut error = 0.0f64;
        let codes = query
            .iter()
            .map(|x| {
                let x = f64::from(*x);
                let code = if step > 0.0 { (x / step).round().clamp(-QUERY_LEVELS, QUERY_LEVELS) } else { 0.0 };
                error = error.max((x - step * code).abs());
                code as i16
            })
            .collect();
        let l1 = query.iter().map(|x| f64::from(x.abs())).sum::<f64>();
        let norm = query.iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt();
        let m = (query.len() + 16) as f64 * F32_UNIT;
        QuantisedQuery { codes, step, error, l1, norm, gamma: m / (1.0 - m) }
    }

    /// An interval certain to hold `super::dot(query, row)` for the row with these codes and
    /// bound, given `product`: the integer dot product of its codes with the query's.
    #[inline(always)]
    fn interval(&self, product: i64, bound: &RowBound) -> (f64, f64) {
        let estimate = f64::from(bound.step) * self.step * product as f64;
        let width = (f64::from(bound.error) * self.l1
            + f64::from(bound.scaled_l1) * self.error
            + self.gamma * f64::from(bound.norm) * self.norm
            + estimate.abs() * F32_UNIT * F32_UNIT)
            * WIDEN
            + FLOOR;
        (estimate - width, estimate + width)
    }
}

/// [`dot_codes`] on the baseline x86-64 target: sixteen i32 lanes, kept out of line, for
/// which the compiler emits `pmaddwd` on 128-bit registers (inlined into the scan it multiplies
/// in 32 bits instead, about 1.5× slower).
#[inline(never)]
fn dot_codes_baseline(a: &[i8], b: &[i16]) -> i64 {
    dot_codes::<16>(a, b)
}

/// [`dot_codes`] in [`may_reach_avx2`]: with 32 lanes the compiler emits `vpmaddwd` on 256-bit
/// registers (with 16 or 64 it multiplies in 32 bits, 2.3× and 10× slower: measured on a
/// standalone scan of 100,000 rows × 384).
#[inline(always)]
fn dot_codes_wide(a: &[i8], b: &[i16]) -> i64 {
    dot_codes::<32>(a, b)
}

/// The integer dot product of row codes and query codes, in `L` i32 lanes. Exact: a product is
/// at most 127 × 2047 and there are at most 4096, so neither a lane nor their sum can leave i32
/// (see [`QUERY_LEVELS`]).
#[inline(always)]
fn dot_codes<const L: usize>(a: &[i8], b: &[i16]) -> i64 {
    let mut acc = [0i32; L];
    let (ca, cb) = (a.chunks_exact(L), b.chunks_exact(L));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        let (Ok(x), Ok(y)) = (<&[i8; L]>::try_from(x), <&[i16; L]>::try_from(y)) else { continue };
        for i in 0..L {
            acc[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    let tail: i32 = ra.iter().zip(rb).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum();
    i64::from(acc.iter().sum::<i32>() + tail)
}

/// An f64 ordered by `total_cmp`, for the heap of lower ends.
#[derive(Debug, Clone, Copy)]
struct Total(f64);
impl PartialEq for Total {
    fn eq(&self, other: &Self) -> bool {
        self.0.total_cmp(&other.0) == Ordering::Equal
    }
}
impl Eq for Total {}
impl PartialOrd for Total {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Total {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The candidates (each once) that may reach the first `fetch` by exact score: `rows` gives
/// each candidate's codes and bound (`None`: no embedding, never scored). Returns every
/// candidate whose interval's upper end reaches the `fetch`-th largest lower end, which holds
/// every candidate whose exact score is at least the `fetch`-th largest one.
pub(super) fn may_reach<'a>(
    query: &QuantisedQuery,
    candidates: &[u32],
    fetch: usize,
    rows: impl Fn(u32) -> Option<(&'a [i8], &'a RowBound)>,
) -> Vec<u32> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        #[allow(unsafe_code, reason = "the one call of a function compiled for AVX2, after checking the CPU has it")]
        // SAFETY: `may_reach_avx2` requires only that the CPU supports AVX2, which the line
        // above has just established. It is the same safe code as the baseline scan, compiled
        // with AVX2 enabled: its kernel is about 4× faster (1.6 against 6.9 ms per 100,000 rows
        // × 384, BENCHMARKS.md "Dense and hybrid recall"), which brings the scan under its
        // target.
        return unsafe { may_reach_avx2(query, candidates, fetch, rows) };
    }
    scan(query, candidates, fetch, rows, dot_codes_baseline)
}

/// [`scan`] compiled with AVX2: [`dot_codes_wide`] inlined into it runs on 256-bit registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn may_reach_avx2<'a>(
    query: &QuantisedQuery,
    candidates: &[u32],
    fetch: usize,
    rows: impl Fn(u32) -> Option<(&'a [i8], &'a RowBound)>,
) -> Vec<u32> {
    scan(query, candidates, fetch, rows, dot_codes_wide)
}

/// The scan of [`may_reach`], with the integer dot product it is given.
#[inline(always)]
fn scan<'a>(
    query: &QuantisedQuery,
    candidates: &[u32],
    fetch: usize,
    rows: impl Fn(u32) -> Option<(&'a [i8], &'a RowBound)>,
    product: impl Fn(&[i8], &[i16]) -> i64,
) -> Vec<u32> {
    // The `fetch` largest lower ends so far; the smallest of them is the cut, which only rises.
    let mut lowest: BinaryHeap<Reverse<Total>> = BinaryHeap::with_capacity(fetch.saturating_add(1));
    let mut cut = f64::NEG_INFINITY;
    let mut kept: Vec<(u32, f64)> = Vec::new();
    for &iid in candidates {
        let Some((codes, bound)) = rows(iid) else { continue };
        let (low, high) = query.interval(product(codes, &query.codes), bound);
        if high < cut {
            continue;
        }
        kept.push((iid, high));
        if lowest.len() < fetch {
            lowest.push(Reverse(Total(low)));
        } else if lowest.peek().is_some_and(|Reverse(Total(least))| low > *least) {
            lowest.pop();
            lowest.push(Reverse(Total(low)));
        }
        if lowest.len() >= fetch {
            cut = lowest.peek().map_or(f64::NEG_INFINITY, |Reverse(Total(least))| *least);
        }
    }
    // A candidate dropped earlier fell below an earlier cut, so below this one too.
    kept.into_iter().filter(|(_, high)| *high >= cut).map(|(iid, _)| iid).collect()
}

#[cfg(test)]
pub(super) mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    /// Values uniform in `[-1, 1)` from a seeded xorshift (any seed but 0).
    pub(in crate::memory::dense) fn uniform(seed: u64) -> impl FnMut() -> f32 {
        let mut s = seed | 1;
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 11) as f64 / (1u64 << 53) as f64) as f32 * 2.0 - 1.0
        }
    }

    #[test]
    fn codes_and_bounds_hold_the_row() {
        let row = [0.5f32, -0.25, 0.125, 0.0, -0.5];
        let mut codes = Vec::new();
        let b = quantise_row(&row, &mut codes);
        assert_eq!(codes, [127, -64, 32, 0, -127]);
        for (x, c) in row.iter().zip(&codes) {
            assert!((f64::from(*x) - f64::from(b.step) * f64::from(*c)).abs() <= f64::from(b.error));
        }
        let zero = quantise_row(&[0.0, 0.0], &mut codes);
        assert_eq!((zero.step, zero.error, zero.scaled_l1, zero.norm), (0.0, 0.0, 0.0, 0.0));
    }

    #[test]
    fn the_integer_dot_product_is_exact_at_the_largest_codes() {
        let a = vec![127i8; 4096];
        let b = vec![2047i16; 4096];
        assert_eq!(dot_codes_wide(&a, &b), 4096 * 127 * 2047);
        assert_eq!(dot_codes_baseline(&a, &b), 4096 * 127 * 2047);
        let (a, b): (Vec<i8>, Vec<i16>) = (vec![-127; 4096], vec![2047; 4096]);
        assert_eq!(dot_codes_wide(&a, &b), -4096 * 127 * 2047);
        assert_eq!(dot_codes_baseline(&[-127, 3], &[-2047, -5]), 127 * 2047 - 15);
        assert_eq!(dot_codes_wide(&[-127, 3], &[-2047, -5]), 127 * 2047 - 15);
    }

    /// The scan compiled for AVX2 (where the CPU has it) keeps what the baseline scan keeps.
    #[test]
    fn both_scans_keep_the_same_candidates() {
        let mut next = uniform(0x2545_f491_4f6c_dd1d);
        for n in [3usize, 16, 33, 384] {
            let mut codes = Vec::new();
            let bounds: Vec<RowBound> =
                (0..500).map(|_| quantise_row(&(0..n).map(|_| next()).collect::<Vec<_>>(), &mut codes)).collect();
            let rows = |iid: u32| Some((&codes[iid as usize * n..(iid as usize + 1) * n], &bounds[iid as usize]));
            let query = QuantisedQuery::new(&(0..n).map(|_| next()).collect::<Vec<_>>());
            let candidates: Vec<u32> = (0..500).collect();
            let baseline = scan(&query, &candidates, 7, rows, dot_codes_baseline);
            assert!(baseline.len() >= 7);
            assert_eq!(may_reach(&query, &candidates, 7, rows), baseline, "n = {n}");
        }
    }

    #[test]
    fn every_interval_holds_the_f32_score() {
        let mut next = uniform(0x9e37_79b9_7f4a_7c15);
        for n in [1usize, 5, 16, 17, 384, 1000] {
            for scale in [1.0e-30f32, 1.0e-3, 1.0, 1.0e6] {
                let q: Vec<f32> = (0..n).map(|_| next() * scale).collect();
                let query = QuantisedQuery::new(&q);
                for _ in 0..20 {
                    let row: Vec<f32> = (0..n).map(|_| next() * scale).collect();
                    let mut codes = Vec::new();
                    let b = quantise_row(&row, &mut codes);
                    let (low, high) = query.interval(dot_codes_baseline(&codes, &query.codes), &b);
                    let exact = f64::from(super::super::dot(&q, &row));
                    assert!(low <= exact && exact <= high, "n {n}, scale {scale}: {low} ≤ {exact} ≤ {high}");
                }
            }
        }
    }
}
