//! Scoring of each retrieval cell and the report: a table, a CSV and a plot of Recall@5 by dose.
//!
//! Every figure is a mean over cells in a fixed order and printed with fixed precision, so the
//! same seed gives the same bytes (wall-clock timings are printed to stdout only, never written).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::Duration;

use plotters::prelude::*;

use crate::gen::{History, Kind, Question, DOSES};
use crate::{authorized, EvalConfig, EvalError, ARMS, FETCH, K};

/// One arm's answer to one question, scored against the generator's ledger.
#[derive(Debug, Clone)]
pub struct Cell {
    pub arm: &'static str,
    pub kind: Kind,
    pub dose: Option<u32>,
    /// Gold items found among the first k, for k = 1..=FETCH.
    pub hits_at: [u32; FETCH],
    pub gold: u32,
    /// Items in the context (the first K) that the container may not admit.
    pub forbidden: u32,
    /// Post-filter only: its window of 20 ran out of admissible items before the context was
    /// full while admissible matches remained beyond it.
    pub exhausted: bool,
    /// Selection noninterference (SPEC §6.1): the largest change in this arm's score of an
    /// admissible item it ranked when the inadmissible items are removed from the store
    /// (`None`: the arm's scores have no distractor-free counterpart, see `crate::answer`).
    pub score_shift: Option<f64>,
}

impl Cell {
    pub fn score(arm: &'static str, h: &History, q: &Question, ranked: &[usize], viewers: &BTreeSet<String>) -> Cell {
        let gold: BTreeSet<&str> = q.gold.iter().map(String::as_str).collect();
        let mut hits_at = [0u32; FETCH];
        let mut hits = 0;
        for (k, slot) in hits_at.iter_mut().enumerate() {
            if let Some(item) = ranked.get(k).and_then(|n| h.items.get(*n)) {
                if gold.contains(item.name.as_str()) {
                    hits += 1;
                }
            }
            *slot = hits;
        }
        let forbidden =
            ranked.iter().take(K).filter(|n| h.items.get(**n).is_some_and(|i| !h.admits(i, viewers))).count() as u32;
        Cell {
            arm,
            kind: q.kind,
            dose: q.dose,
            hits_at,
            gold: gold.len() as u32,
            forbidden,
            exhausted: false,
            score_shift: None,
        }
    }

    fn recall_at(&self, k: usize) -> f64 {
        let hits = self.hits_at.get(k.saturating_sub(1)).copied().unwrap_or(0);
        f64::from(hits) / f64::from(self.gold.max(1))
    }
}

/// One arm's aggregates.
#[derive(Debug, Clone, Default)]
pub struct ArmReport {
    pub arm: &'static str,
    pub contexts: usize,
    pub forbidden_items: u64,
    pub contexts_with_forbidden: usize,
    /// Contexts at dose 8, and those among them with a forbidden item.
    pub dose8_contexts: usize,
    pub dose8_with_forbidden: usize,
    /// Abstention contexts (only unauthorized evidence exists) that show a forbidden item.
    pub abstentions: usize,
    pub abstentions_exposed: usize,
    /// Cells whose fetch window was exhausted (post-filter only).
    pub windows_exhausted: usize,
    /// Mean entitled Recall@k, k = 1..=FETCH, over the cells with gold evidence.
    pub recall_at: Vec<f64>,
    /// Mean Recall@K of the temporal-update question at each dose of [`DOSES`].
    pub recall_by_dose: Vec<f64>,
    /// Selection noninterference: the largest and the mean per-context score shift of
    /// admissible items when the inadmissible ones are removed (`None`: not measurable for
    /// this arm). Must be exactly 0 for the arms that rank with their candidates' statistics.
    pub score_shift_max: Option<f64>,
    pub score_shift_mean: Option<f64>,
}

impl ArmReport {
    pub fn forbidden_per_context(&self) -> f64 {
        self.forbidden_items as f64 / self.contexts.max(1) as f64
    }
    pub fn share_with_forbidden(&self) -> f64 {
        self.contexts_with_forbidden as f64 / self.contexts.max(1) as f64
    }
    pub fn dose8_share_with_forbidden(&self) -> f64 {
        self.dose8_with_forbidden as f64 / self.dose8_contexts.max(1) as f64
    }
}

/// A score shift as the table prints it: `0` only when exactly zero.
fn shift_cell(shift: Option<f64>) -> String {
    match shift {
        None => "-".into(),
        Some(0.0) => "0".into(),
        Some(s) => format!("{s:.2e}"),
    }
}

/// The whole report.
#[derive(Debug, Clone)]
pub struct Report {
    pub seed: u64,
    pub histories: usize,
    pub items: usize,
    pub arms: Vec<ArmReport>,
    /// Generation + import, index built, total (stdout only).
    pub timing: Option<(Duration, Duration, Duration)>,
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for x in xs {
        sum += x;
        n += 1;
    }
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

impl Report {
    pub fn aggregate(cfg: &EvalConfig, cells: &[Cell]) -> Report {
        let arms = ARMS
            .iter()
            .map(|arm| {
                let mine: Vec<&Cell> = cells.iter().filter(|c| c.arm == *arm).collect();
                let with_gold: Vec<&&Cell> = mine.iter().filter(|c| c.gold > 0).collect();
                let dose8: Vec<&&Cell> = mine.iter().filter(|c| c.dose == Some(8)).collect();
                let abst: Vec<&&Cell> = mine.iter().filter(|c| c.kind == Kind::Abstention).collect();
                let shifts: Vec<f64> = mine.iter().filter_map(|c| c.score_shift).collect();
                ArmReport {
                    arm,
                    contexts: mine.len(),
                    forbidden_items: mine.iter().map(|c| u64::from(c.forbidden)).sum(),
                    contexts_with_forbidden: mine.iter().filter(|c| c.forbidden > 0).count(),
                    dose8_contexts: dose8.len(),
                    dose8_with_forbidden: dose8.iter().filter(|c| c.forbidden > 0).count(),
                    abstentions: abst.len(),
                    abstentions_exposed: abst.iter().filter(|c| c.forbidden > 0).count(),
                    windows_exhausted: mine.iter().filter(|c| c.exhausted).count(),
                    recall_at: (1..=FETCH).map(|k| mean(with_gold.iter().map(|c| c.recall_at(k)))).collect(),
                    recall_by_dose: DOSES
                        .iter()
                        .map(|d| mean(mine.iter().filter(|c| c.dose == Some(*d)).map(|c| c.recall_at(K))))
                        .collect(),
                    score_shift_max: (!shifts.is_empty()).then(|| shifts.iter().copied().fold(0.0, f64::max)),
                    score_shift_mean: (!shifts.is_empty()).then(|| mean(shifts.iter().copied())),
                }
            })
            .collect();
        Report { seed: cfg.seed, histories: cfg.histories, items: 0, arms, timing: None }
    }

    pub fn arm(&self, name: &str) -> Option<&ArmReport> {
        self.arms.iter().find(|a| a.arm == name)
    }

    /// The table printed on stdout and written to `report.txt`.
    pub fn table(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "earshot eval: {} histories, {} items, seed {}, fetch {FETCH}, k {K}",
            self.histories, self.items, self.seed
        );
        let _ = writeln!(t);
        let _ = writeln!(
            t,
            "{:<19} {:>8} {:>9} {:>9} {:>9} {:>8} {:>6} {:>6} {:>6} {:>6} {:>9}",
            "arm", "contexts", "forb/ctx", "ctx forb", "d8 forb", "abst exp", "R@1", "R@5", "R@10", "R@20", "sel shift"
        );
        for a in &self.arms {
            let r = |k: usize| a.recall_at.get(k - 1).copied().unwrap_or(0.0);
            let _ = writeln!(
                t,
                "{:<19} {:>8} {:>9.3} {:>8.1}% {:>8.1}% {:>7.1}% {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>9}",
                a.arm,
                a.contexts,
                a.forbidden_per_context(),
                100.0 * a.share_with_forbidden(),
                100.0 * a.dose8_share_with_forbidden(),
                100.0 * a.abstentions_exposed as f64 / a.abstentions.max(1) as f64,
                r(1),
                r(5),
                r(10),
                r(20),
                shift_cell(a.score_shift_max)
            );
        }
        if let Some(p) = self.arm("post_filter") {
            let _ = writeln!(t, "post-filter windows exhausted: {} of {} contexts", p.windows_exhausted, p.contexts);
        }
        let _ = writeln!(t);
        let _ = write!(t, "{:<19}", "Recall@5 by dose");
        for d in DOSES {
            let _ = write!(t, " {:>7}", format!("d={d}"));
        }
        let _ = writeln!(t);
        for a in &self.arms {
            let _ = write!(t, "{:<19}", a.arm);
            for r in &a.recall_by_dose {
                let _ = write!(t, " {r:>7.3}");
            }
            let _ = writeln!(t);
        }
        if let (Some(e), Some(u)) = (self.arm("earshot_indexed"), self.arm("unscoped")) {
            let _ = write!(t, "{:<19}", "advantage vs unsc.");
            for (a, b) in e.recall_by_dose.iter().zip(&u.recall_by_dose) {
                let _ = write!(t, " {:>+7.3}", a - b);
            }
            let _ = writeln!(t);
        }
        let _ = writeln!(t);
        let _ = write!(t, "{:<19}", "Recall@k");
        for k in [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20] {
            let _ = write!(t, " {:>6}", format!("k={k}"));
        }
        let _ = writeln!(t);
        for a in &self.arms {
            let _ = write!(t, "{:<19}", a.arm);
            for k in [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20] {
                let _ = write!(t, " {:>6.3}", a.recall_at.get(k - 1).copied().unwrap_or(0.0));
            }
            let _ = writeln!(t);
        }
        let _ = writeln!(t);
        let _ = writeln!(
            t,
            "forb/ctx: forbidden items per context (k={K}); ctx forb: contexts with any; d8 forb: the same at \
             dose 8; abst exp: abstention contexts showing unauthorized evidence. Recall is entitled recall \
             over questions with gold evidence. sel shift: selection noninterference (SPEC §6.1), the largest \
             change of an admissible item's score when the inadmissible items are removed from the store, \
             over every 32nd history (0: exactly none; -: not measurable for the arm)."
        );
        t
    }

    /// `arm,metric,param,value`, one row per figure.
    pub fn csv(&self) -> String {
        let mut c = String::from("arm,metric,param,value\n");
        for a in &self.arms {
            let authorized = if authorized(a.arm) { 1 } else { 0 };
            let _ = writeln!(c, "{},authorized,,{authorized}", a.arm);
            let _ = writeln!(c, "{},contexts,,{}", a.arm, a.contexts);
            let _ = writeln!(c, "{},forbidden_items,,{}", a.arm, a.forbidden_items);
            let _ = writeln!(c, "{},forbidden_per_context,,{:.6}", a.arm, a.forbidden_per_context());
            let _ = writeln!(c, "{},contexts_with_forbidden,,{}", a.arm, a.contexts_with_forbidden);
            let _ = writeln!(c, "{},share_contexts_with_forbidden,,{:.6}", a.arm, a.share_with_forbidden());
            let _ = writeln!(c, "{},share_dose8_contexts_with_forbidden,,{:.6}", a.arm, a.dose8_share_with_forbidden());
            let _ = writeln!(c, "{},abstention_contexts_exposed,,{}", a.arm, a.abstentions_exposed);
            let _ = writeln!(c, "{},windows_exhausted,,{}", a.arm, a.windows_exhausted);
            if let (Some(max), Some(mean)) = (a.score_shift_max, a.score_shift_mean) {
                let _ = writeln!(c, "{},score_shift_max,,{max:e}", a.arm);
                let _ = writeln!(c, "{},score_shift_mean,,{mean:e}", a.arm);
            }
            for (k, r) in a.recall_at.iter().enumerate() {
                let _ = writeln!(c, "{},recall_at_k,{},{r:.6}", a.arm, k + 1);
            }
            for (d, r) in DOSES.iter().zip(&a.recall_by_dose) {
                let _ = writeln!(c, "{},recall_at_5_by_dose,{d},{r:.6}", a.arm);
            }
        }
        c
    }

    /// Recall@5 against distractor dose, one line per arm, as SVG.
    pub fn svg(&self) -> Result<String, EvalError> {
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (980, 560)).into_drawing_area();
            let plot = |e: &dyn std::fmt::Display| EvalError::Plot(e.to_string());
            root.fill(&WHITE).map_err(|e| plot(&e))?;
            let title =
                format!("Entitled Recall@5 vs. distractor dose ({} histories, seed {})", self.histories, self.seed);
            let mut chart = ChartBuilder::on(&root)
                .caption(title, ("sans-serif", 20))
                .margin(16)
                .x_label_area_size(44)
                .y_label_area_size(56)
                .build_cartesian_2d(-0.2f64..7.0f64, 0.0f64..1.05f64)
                .map_err(|e| plot(&e))?;
            chart
                .configure_mesh()
                .x_labels(8)
                .x_label_formatter(&|x| {
                    let i = x.round() as usize;
                    if (x - x.round()).abs() < 1e-6 {
                        DOSES.get(i).map(|d| d.to_string()).unwrap_or_default()
                    } else {
                        String::new()
                    }
                })
                .x_desc("same-predicate distractors about other participants (dose)")
                .y_desc("Recall@5")
                .draw()
                .map_err(|e| plot(&e))?;
            // The x axis runs past the last dose so that the legend (upper right) covers no line.
            // The four policy-equivalent arms coincide; each is drawn so that every line shows.
            // Then the dense and hybrid arms, thinner, in the same order (gated, unscoped,
            // post-filter) and darker or lighter shades of their BM25 counterparts' colours.
            let styles: [(RGBColor, u32); 12] = [
                (RGBColor(31, 119, 180), 7),
                (RGBColor(44, 160, 44), 5),
                (RGBColor(214, 39, 40), 3),
                (RGBColor(148, 103, 189), 3),
                (RGBColor(255, 127, 14), 3),
                (RGBColor(23, 190, 207), 1),
                (RGBColor(16, 60, 120), 2),
                (RGBColor(20, 100, 20), 2),
                (RGBColor(140, 20, 20), 2),
                (RGBColor(240, 120, 150), 2),
                (RGBColor(180, 90, 10), 1),
                (RGBColor(120, 120, 120), 1),
            ];
            let reference = self.arms.first().map(|a| a.recall_by_dose.clone()).unwrap_or_default();
            for (n, (a, (color, width))) in self.arms.iter().zip(styles).enumerate() {
                let label = if n > 0 && a.recall_by_dose == reference {
                    format!("{} (= {})", a.arm, ARMS[0])
                } else {
                    a.arm.to_string()
                };
                let points: Vec<(f64, f64)> =
                    a.recall_by_dose.iter().enumerate().map(|(i, r)| (i as f64, *r)).collect();
                let style = ShapeStyle::from(&color).stroke_width(width);
                chart
                    .draw_series(LineSeries::new(points.clone(), style))
                    .map_err(|e| plot(&e))?
                    .label(label)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
                chart
                    .draw_series(points.iter().map(|p| Circle::new(*p, 3 + width / 2, color.filled())))
                    .map_err(|e| plot(&e))?;
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(|e| plot(&e))?;
            root.present().map_err(|e| plot(&e))?;
        }
        Ok(out)
    }
}
