//! The relation schema of a store (SPEC §2.1): its text format, the parser with line-and-column
//! errors, and the compiled form that decisions consult.
//!
//! ```text
//! # Which slices of the grantor's devices each relation opens.
//! relation family {
//!     opens status/waking
//!     opens medication/**
//! }
//! relation care_provider {
//!     opens vitals/** for read, subscribe
//! }
//! relation guardian {
//!     includes family        # a relation opens another's slices only when the schema says so
//!     opens location/*
//! }
//! ```
//!
//! An aggregation conflict (SPEC §6.4) names slice patterns that must not be used together by
//! one principal on one grantor's devices within a window (see [`crate::aggregation`]):
//!
//! ```text
//! conflict empty_home { location/**, calendar/** within 24h }
//! ```
//!
//! A conflict has two to [`MAX_CONFLICT_MEMBERS`] distinct patterns and one window, `<n>s`,
//! `<n>m`, `<n>h` or `<n>d`, of at most [`MAX_WINDOW_MS`]. Conflicts have their own names.
//!
//! `opens <pattern>` grants `read` unless `for <action>, …` names the actions. Statements end at
//! the end of a line or at `;`, and a body may sit on one line (`relation a { includes b; opens
//! x/* }`). Relations do not overlap or nest unless `includes` says so. Every problem is reported with its line and column,
//! and the whole schema is refused if there is any.

use std::collections::{BTreeMap, BTreeSet};

use crate::path::{Path, PathPattern};

/// Longest schema text, in bytes.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// Most relations in a schema.
pub const MAX_RELATIONS: usize = 256;
/// Most problems reported for one schema.
pub const MAX_PROBLEMS: usize = 50;
/// Longest relation or action name.
pub const MAX_NAME_LEN: usize = 64;
/// Most conflicts in a schema.
pub const MAX_CONFLICTS: usize = 64;
/// Most patterns in one conflict.
pub const MAX_CONFLICT_MEMBERS: usize = 16;
/// Longest conflict window: 366 days.
pub const MAX_WINDOW_MS: i64 = 366 * 24 * 3600 * 1000;

/// One problem in a schema text, at a 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SchemaProblem {
    pub line: usize,
    pub column: usize,
    /// A stable snake_case code: `syntax`, `bad_name`, `bad_pattern`, `unknown_relation`,
    /// `duplicate_relation`, `duplicate_pattern`, `include_cycle`, `too_large`,
    /// `duplicate_conflict`, `bad_window`.
    pub code: &'static str,
    pub message: String,
}

impl std::fmt::Display for SchemaProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}: {}", self.line, self.column, self.code, self.message)
    }
}

/// One slice a relation opens: a pattern and the actions allowed on it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Opening {
    pub pattern: PathPattern,
    pub actions: Vec<String>,
}

/// A relation with its own openings and everything it includes, flattened.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Relation {
    pub name: String,
    /// The relations named by `includes`, as written.
    pub includes: Vec<String>,
    /// Every opening, own and included, in a stable order.
    pub opens: Vec<Opening>,
}

impl Relation {
    /// Whether this relation opens `path` for `action`.
    pub fn opens(&self, path: &Path<'_>, action: &str) -> bool {
        self.opens.iter().any(|o| o.actions.iter().any(|a| a == action) && o.pattern.matches(path))
    }
}

/// An aggregation conflict (SPEC §6.4): slices that one principal may not use together on one
/// grantor's devices within `window_ms`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Conflict {
    pub name: String,
    /// The members, in the order written; distinct.
    pub members: Vec<PathPattern>,
    pub window_ms: i64,
    /// The window as written (`24h`).
    pub window: String,
}

impl Conflict {
    /// The members `path` matches, as a bit set over member positions.
    pub fn members_of(&self, path: &Path<'_>) -> u32 {
        self.members.iter().enumerate().filter(|(_, m)| m.matches(path)).fold(0, |acc, (i, _)| acc | (1 << i))
    }
}

/// A compiled schema.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schema {
    pub source: String,
    pub relations: BTreeMap<String, Relation>,
    /// Aggregation conflicts, in the order declared.
    pub conflicts: Vec<Conflict>,
}

impl Schema {
    pub fn relation(&self, name: &str) -> Option<&Relation> {
        self.relations.get(name)
    }
}

/// Whether `s` is a relation or action name: lowercase ASCII letter, then letters, digits, `_`, `-`.
pub fn is_name(s: &str) -> bool {
    let mut b = s.bytes();
    s.len() <= MAX_NAME_LEN
        && b.next().is_some_and(|c| c.is_ascii_lowercase())
        && b.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-')
}

/// A word of the schema with its 1-based line and column.
#[derive(Debug, Clone, Copy)]
struct Word<'a> {
    text: &'a str,
    line: usize,
    column: usize,
}

/// Splits a schema into statements: the words of one statement, in order.
///
/// A statement ends at the end of a line, at `;`, after `{` (so `relation a {` is one statement
/// and what follows on the line is the next), and before and after `}` (a statement of its own).
/// So a body can be written on one line: `relation a { includes b; opens x/* }`. `,` is a word of
/// its own; `#` starts a comment that runs to the end of the line.
fn statements(source: &str) -> Vec<Vec<Word<'_>>> {
    let mut out = Vec::new();
    let mut current: Vec<Word<'_>> = Vec::new();
    for (n, line) in source.lines().enumerate() {
        let ln = n + 1;
        let code = line.split('#').next().unwrap_or("");
        let mut start: Option<usize> = None;
        for (i, c) in code.char_indices().chain(std::iter::once((code.len(), ' '))) {
            let punct = matches!(c, '{' | '}' | ',' | ';');
            if !(c.is_whitespace() || punct) {
                if start.is_none() {
                    start = Some(i);
                }
                continue;
            }
            if let Some(s) = start.take() {
                current.push(Word { text: code.get(s..i).unwrap_or(""), line: ln, column: column_of(code, s) });
            }
            let word = Word { text: code.get(i..i + c.len_utf8()).unwrap_or(""), line: ln, column: column_of(code, i) };
            match c {
                '{' => {
                    current.push(word);
                    out.push(std::mem::take(&mut current));
                }
                '}' => {
                    if !current.is_empty() {
                        out.push(std::mem::take(&mut current));
                    }
                    out.push(vec![word]);
                }
                ';' if !current.is_empty() => out.push(std::mem::take(&mut current)),
                ',' => current.push(word),
                _ => {}
            }
        }
        if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
    }
    out
}

fn column_of(line: &str, byte: usize) -> usize {
    line.get(..byte).map_or(1, |s| s.chars().count() + 1)
}

/// Parses a window: a positive whole number and a unit (`s`, `m`, `h`, `d`), at most
/// [`MAX_WINDOW_MS`].
pub fn parse_window(s: &str) -> Result<i64, String> {
    let unit_at = s.len().saturating_sub(1);
    let (digits, unit) = (s.get(..unit_at).unwrap_or(""), s.get(unit_at..).unwrap_or(""));
    let per: i64 = match unit {
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(format!("`{s}` is not a window (a whole number and s, m, h or d, as in `24h`)")),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("`{s}` is not a window (a whole number and s, m, h or d, as in `24h`)"));
    }
    let n: i64 = digits.parse().map_err(|_| format!("window `{s}` is too long"))?;
    match n.checked_mul(per) {
        Some(ms) if ms > 0 && ms <= MAX_WINDOW_MS => Ok(ms),
        Some(0) => Err("a window must be longer than zero".into()),
        _ => Err(format!("window `{s}` is longer than 366 days")),
    }
}

struct RawConflict<'a> {
    name: Word<'a>,
    line: usize,
    members: Vec<PathPattern>,
    window: Option<(i64, String)>,
    /// A `within` was written (a bad window is reported where it is, not as missing).
    window_written: bool,
    /// A problem in the body was reported; the whole-conflict checks would only add noise.
    broken: bool,
}

struct RawRelation<'a> {
    name: Word<'a>,
    line: usize,
    includes: Vec<(Word<'a>, usize)>,
    opens: Vec<Opening>,
}

/// Parses and validates a schema; on any problem, returns them all (up to [`MAX_PROBLEMS`]).
pub fn parse(source: &str) -> Result<Schema, Vec<SchemaProblem>> {
    let mut problems = Vec::new();
    let mut problem = |line: usize, column: usize, code: &'static str, message: String| {
        if problems.len() < MAX_PROBLEMS {
            problems.push(SchemaProblem { line, column, code, message });
        }
    };
    if source.len() > MAX_SCHEMA_BYTES {
        problem(1, 1, "too_large", format!("schema is longer than {MAX_SCHEMA_BYTES} bytes"));
        return Err(problems);
    }
    let mut raw: Vec<RawRelation<'_>> = Vec::new();
    let mut open: Option<RawRelation<'_>> = None;
    let mut conflicts: Vec<RawConflict<'_>> = Vec::new();
    let mut open_conflict: Option<RawConflict<'_>> = None;
    let last_line = source.lines().count();
    for ws in statements(source) {
        let Some(first) = ws.first() else { continue };
        let ln = first.line;
        if let Some(c) = open_conflict.as_mut() {
            match first.text {
                "}" => {
                    let c = open_conflict.take();
                    conflicts.extend(c);
                }
                "relation" | "conflict" => problem(
                    ln,
                    first.column,
                    "syntax",
                    format!("conflict `{}` is not closed before this (missing `}}`)", c.name.text),
                ),
                _ => {
                    if !conflict_body(c, &ws, &mut problem) {
                        c.broken = true;
                    }
                }
            }
            continue;
        }
        if first.text == "conflict" {
            if let Some(r) = &open {
                problem(
                    ln,
                    first.column,
                    "syntax",
                    format!("relation `{}` is not closed before this conflict (missing `}}`)", r.name.text),
                );
                continue;
            }
            let Some(name) = block_header(&ws, "conflict", &mut problem) else { continue };
            open_conflict = Some(RawConflict {
                name,
                line: ln,
                members: Vec::new(),
                window: None,
                window_written: false,
                broken: false,
            });
            continue;
        }
        match (first.text, open.as_mut()) {
            ("relation", None) => {
                let Some(name) = block_header(&ws, "relation", &mut problem) else { continue };
                open = Some(RawRelation { name, line: ln, includes: Vec::new(), opens: Vec::new() });
            }
            ("relation", Some(r)) => {
                problem(
                    ln,
                    first.column,
                    "syntax",
                    format!("relation `{}` is not closed before this one (missing `}}`)", r.name.text),
                );
            }
            ("}", Some(_)) => raw.extend(open.take()),
            ("opens", Some(r)) => {
                let Some(pat) = ws.get(1) else {
                    problem(ln, first.column, "syntax", "expected a path pattern after `opens`".into());
                    continue;
                };
                let pattern = match PathPattern::parse(pat.text) {
                    Ok(p) => p,
                    Err(e) => {
                        problem(ln, pat.column, "bad_pattern", format!("pattern `{}` {e}", pat.text));
                        continue;
                    }
                };
                let mut actions = Vec::new();
                match ws.get(2) {
                    None => actions.push("read".to_string()),
                    Some(w) if w.text == "for" => {
                        let mut expect_name = true;
                        let mut bad = false;
                        for w in ws.iter().skip(3) {
                            if expect_name && is_name(w.text) {
                                if !actions.iter().any(|a| a == w.text) {
                                    actions.push(w.text.to_string());
                                }
                            } else if expect_name || w.text != "," {
                                problem(ln, w.column, "bad_name", format!("`{}` is not an action name", w.text));
                                bad = true;
                                break;
                            }
                            expect_name = !expect_name;
                        }
                        if bad {
                            continue;
                        }
                        if actions.is_empty() || expect_name {
                            problem(ln, w.column, "syntax", "expected one or more actions after `for`".into());
                            continue;
                        }
                    }
                    Some(w) => {
                        problem(
                            ln,
                            w.column,
                            "syntax",
                            format!("expected `for <action>, …` or the end of the statement, found `{}`", w.text),
                        );
                        continue;
                    }
                }
                actions.sort();
                if r.opens.iter().any(|o| o.pattern == pattern) {
                    problem(
                        ln,
                        pat.column,
                        "duplicate_pattern",
                        format!("relation `{}` already opens `{}`", r.name.text, pat.text),
                    );
                    continue;
                }
                r.opens.push(Opening { pattern, actions });
            }
            ("includes", Some(r)) => match ws.get(1) {
                Some(name) if ws.len() == 2 => r.includes.push((*name, ln)),
                _ => problem(ln, first.column, "syntax", "expected `includes <relation>`".into()),
            },
            (_, None) => {
                problem(ln, first.column, "syntax", format!("expected `relation <name> {{`, found `{}`", first.text))
            }
            (_, Some(_)) => problem(
                ln,
                first.column,
                "syntax",
                format!("expected `opens`, `includes` or `}}`, found `{}`", first.text),
            ),
        }
    }
    if let Some(r) = open {
        problem(
            last_line.max(1),
            1,
            "syntax",
            format!("relation `{}` (line {}) is never closed with `}}`", r.name.text, r.line),
        );
    }
    if let Some(c) = open_conflict {
        problem(
            last_line.max(1),
            1,
            "syntax",
            format!("conflict `{}` (line {}) is never closed with `}}`", c.name.text, c.line),
        );
    }
    let compiled_conflicts = check_conflicts(conflicts, &mut problem);
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &raw {
        if let Some(first) = seen.insert(r.name.text, r.line) {
            problem(
                r.line,
                r.name.column,
                "duplicate_relation",
                format!("relation `{}` is already declared on line {first}", r.name.text),
            );
        }
    }
    if raw.len() > MAX_RELATIONS {
        problem(1, 1, "too_large", format!("more than {MAX_RELATIONS} relations"));
    }
    for r in &raw {
        for (inc, ln) in &r.includes {
            if !seen.contains_key(inc.text) {
                problem(*ln, inc.column, "unknown_relation", format!("relation `{}` is not declared", inc.text));
            }
        }
    }
    // Flatten includes; a cycle is a problem, reported once at the include that closes it.
    let by_name: BTreeMap<&str, &RawRelation<'_>> = raw.iter().map(|r| (r.name.text, r)).collect();
    let mut relations = BTreeMap::new();
    for r in &raw {
        let mut opens: Vec<Opening> = Vec::new();
        let mut visited: BTreeSet<&str> = BTreeSet::new();
        let mut stack = vec![r.name.text];
        while let Some(name) = stack.pop() {
            if !visited.insert(name) {
                continue;
            }
            let Some(rel) = by_name.get(name) else { continue };
            for o in &rel.opens {
                match opens.iter_mut().find(|x| x.pattern == o.pattern) {
                    Some(x) => {
                        x.actions.extend(o.actions.iter().cloned());
                        x.actions.sort();
                        x.actions.dedup();
                    }
                    None => opens.push(o.clone()),
                }
            }
            for (inc, ln) in &rel.includes {
                if inc.text == r.name.text {
                    problem(
                        *ln,
                        inc.column,
                        "include_cycle",
                        format!("relation `{}` includes itself through `{name}`", r.name.text),
                    );
                } else {
                    stack.push(inc.text);
                }
            }
        }
        opens.sort_by(|a, b| a.pattern.as_str().cmp(b.pattern.as_str()));
        let includes = r.includes.iter().map(|(w, _)| w.text.to_string()).collect();
        relations.insert(r.name.text.to_string(), Relation { name: r.name.text.to_string(), includes, opens });
    }
    if problems.is_empty() {
        Ok(Schema { source: source.to_string(), relations, conflicts: compiled_conflicts })
    } else {
        problems.sort_by_key(|p| (p.line, p.column));
        Err(problems)
    }
}

/// The header of a block, `<keyword> <name> {`: its name, or `None` (reported) when the
/// statement is not a header. A name that is not a valid name is reported but still returned,
/// so the block's body is checked too.
fn block_header<'a>(
    ws: &[Word<'a>],
    keyword: &str,
    problem: &mut impl FnMut(usize, usize, &'static str, String),
) -> Option<Word<'a>> {
    let first = ws.first()?;
    let (Some(name), Some(brace)) = (ws.get(1), ws.get(2)) else {
        problem(first.line, first.column, "syntax", format!("expected `{keyword} <name> {{`"));
        return None;
    };
    if brace.text != "{" {
        problem(
            first.line,
            brace.column,
            "syntax",
            format!("expected `{{` after the {keyword} name, found `{}`", brace.text),
        );
        return None;
    }
    if !is_name(name.text) {
        problem(
            first.line,
            name.column,
            "bad_name",
            format!("`{}` is not a {keyword} name (lowercase letters, digits, `_`, `-`)", name.text),
        );
    }
    Some(*name)
}

/// One statement of a conflict's body: patterns separated by `,`, optionally ending with
/// `within <window>` (or that alone).
fn conflict_body(
    c: &mut RawConflict<'_>,
    ws: &[Word<'_>],
    problem: &mut impl FnMut(usize, usize, &'static str, String),
) -> bool {
    let mut words = ws.iter().peekable();
    let mut expect_pattern = true;
    while let Some(w) = words.next() {
        if w.text == "within" {
            let Some(d) = words.next() else {
                problem(w.line, w.column, "syntax", "expected a window after `within`, as in `within 24h`".into());
                return false;
            };
            if let Some(extra) = words.next() {
                problem(extra.line, extra.column, "syntax", format!("unexpected `{}` after the window", extra.text));
                return false;
            }
            if c.window_written {
                problem(w.line, w.column, "syntax", format!("conflict `{}` has two windows", c.name.text));
                return false;
            }
            c.window_written = true;
            match parse_window(d.text) {
                Ok(ms) => c.window = Some((ms, d.text.to_string())),
                Err(m) => {
                    problem(d.line, d.column, "bad_window", m);
                    return false;
                }
            }
            return true;
        }
        if w.text == "," {
            if expect_pattern {
                problem(w.line, w.column, "syntax", "expected a path pattern before `,`".into());
                return false;
            }
            expect_pattern = true;
            continue;
        }
        if !expect_pattern {
            problem(w.line, w.column, "syntax", format!("expected `,` or `within`, found `{}`", w.text));
            return false;
        }
        match PathPattern::parse(w.text) {
            Ok(p) if c.members.contains(&p) => {
                problem(
                    w.line,
                    w.column,
                    "duplicate_pattern",
                    format!("conflict `{}` already names `{}`", c.name.text, w.text),
                );
                return false;
            }
            Ok(p) => c.members.push(p),
            Err(e) => {
                problem(w.line, w.column, "bad_pattern", format!("pattern `{}` {e}", w.text));
                return false;
            }
        }
        expect_pattern = false;
    }
    true
}

/// Checks the conflicts as a whole (names unique, two or more members, a window) and compiles them.
fn check_conflicts(
    raw: Vec<RawConflict<'_>>,
    problem: &mut impl FnMut(usize, usize, &'static str, String),
) -> Vec<Conflict> {
    if raw.len() > MAX_CONFLICTS {
        problem(1, 1, "too_large", format!("more than {MAX_CONFLICTS} conflicts"));
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for c in &raw {
        if let Some(first) = seen.insert(c.name.text, c.line) {
            problem(
                c.line,
                c.name.column,
                "duplicate_conflict",
                format!("conflict `{}` is already declared on line {first}", c.name.text),
            );
        }
        if c.broken {
            continue;
        }
        if c.members.len() < 2 {
            problem(c.line, c.name.column, "syntax", format!("conflict `{}` needs two or more patterns", c.name.text));
        }
        if c.members.len() > MAX_CONFLICT_MEMBERS {
            problem(
                c.line,
                c.name.column,
                "too_large",
                format!("conflict `{}` has more than {MAX_CONFLICT_MEMBERS} patterns", c.name.text),
            );
        }
        match &c.window {
            None if !c.window_written => {
                problem(c.line, c.name.column, "syntax", format!("conflict `{}` needs `within <window>`", c.name.text))
            }
            None => {}
            Some((ms, text)) => out.push(Conflict {
                name: c.name.text.to_string(),
                members: c.members.clone(),
                window_ms: *ms,
                window: text.clone(),
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUSEHOLD: &str = "# household\nrelation family {\n  opens status/waking\n  opens medication/**\n}\n\
        relation care_provider {\n  opens vitals/** for read, subscribe\n}\nrelation colleague {\n  opens calendar/next-start\n}\n";

    fn codes(src: &str) -> Vec<(usize, usize, &'static str)> {
        parse(src).unwrap_err().into_iter().map(|p| (p.line, p.column, p.code)).collect()
    }

    #[test]
    fn parses_the_household_schema() {
        let s = parse(HOUSEHOLD).unwrap();
        assert_eq!(s.relations.len(), 3);
        let fam = s.relation("family").unwrap();
        assert!(fam.opens(&Path::parse("medication/a").unwrap(), "read"));
        assert!(!fam.opens(&Path::parse("medication/a").unwrap(), "write"));
        assert!(!fam.opens(&Path::parse("vitals/a").unwrap(), "read"));
        let care = s.relation("care_provider").unwrap();
        assert_eq!(care.opens[0].actions, vec!["read", "subscribe"]);
        assert!(!care.opens(&Path::parse("status/waking").unwrap(), "read"));
    }

    #[test]
    fn includes_are_flattened_and_cycles_refused() {
        let s = parse("relation a {\n opens x/*\n}\nrelation b {\n includes a\n opens y\n}\n").unwrap();
        let b = s.relation("b").unwrap();
        assert!(b.opens(&Path::parse("x/1").unwrap(), "read"));
        assert!(!s.relation("a").unwrap().opens(&Path::parse("y").unwrap(), "read"));
        assert_eq!(codes("relation a {\n includes b\n}\nrelation b {\n includes a\n}\n")[0].2, "include_cycle");
    }

    #[test]
    fn problems_name_line_column_and_code() {
        assert_eq!(codes("relation family {\n  opens calendar/priv*\n}\n"), vec![(2, 9, "bad_pattern")]);
        assert_eq!(codes("relation a {\n  includes nobody\n}\n"), vec![(2, 12, "unknown_relation")]);
        assert_eq!(codes("relation a {\n}\nrelation a {\n}\n"), vec![(3, 10, "duplicate_relation")]);
        assert_eq!(codes("relation a {\n opens x\n opens x\n}\n"), vec![(3, 8, "duplicate_pattern")]);
        assert_eq!(codes("relation Bad {\n}\n"), vec![(1, 10, "bad_name")]);
        assert_eq!(codes("relation a {\n opens x\n"), vec![(2, 1, "syntax")]);
        assert_eq!(codes("opens x\n"), vec![(1, 1, "syntax")]);
        assert_eq!(codes("relation a {\n frobnicate\n}\n"), vec![(2, 2, "syntax")]);
        assert_eq!(codes("relation a {\n opens x for\n}\n"), vec![(2, 10, "syntax")]);
        assert_eq!(codes("relation a {\n opens x for Read\n}\n"), vec![(2, 14, "bad_name")]);
    }

    #[test]
    fn comments_and_blank_lines_are_ignored() {
        let s = parse("\n# c\nrelation a { # c\n opens x # c\n}\n").unwrap();
        assert_eq!(s.relation("a").unwrap().opens.len(), 1);
    }

    #[test]
    fn problems_display_as_line_column_code_message() {
        let p = parse("relation a {\n opens x\n opens x\n}\n").unwrap_err();
        assert_eq!(p[0].to_string(), "3:8: duplicate_pattern: relation `a` already opens `x`");
    }

    #[test]
    fn names_allow_underscores_and_dashes_only() {
        assert!(is_name("care_provider") && is_name("co-parent") && is_name("a1"));
        assert!(!is_name("a.b") && !is_name("a b") && !is_name("1a") && !is_name("") && !is_name("aB"));
        assert!(!is_name(&"a".repeat(MAX_NAME_LEN + 1)) && is_name(&"a".repeat(MAX_NAME_LEN)));
    }

    #[test]
    fn malformed_opens_and_includes_lines_are_refused() {
        assert_eq!(codes("relation a {\n opens x y\n}\n"), vec![(2, 10, "syntax")]);
        assert_eq!(codes("relation a {\n opens x y read\n}\n"), vec![(2, 10, "syntax")]);
        assert_eq!(codes("relation a {\n opens x for read write\n}\n"), vec![(2, 19, "bad_name")]);
        assert_eq!(codes("relation a {\n opens x for read,\n}\n"), vec![(2, 10, "syntax")]);
        assert_eq!(codes("relation b {\n}\nrelation a {\n includes b c\n}\n"), vec![(4, 2, "syntax")]);
        let ok = parse("relation a {\n opens x for read, write\n}\n").unwrap();
        assert_eq!(ok.relation("a").unwrap().opens[0].actions, vec!["read", "write"]);
    }

    #[test]
    fn bodies_may_sit_on_one_line() {
        let s = parse("relation b { opens y }\nrelation a { includes b }\n").unwrap();
        assert!(s.relation("a").unwrap().opens(&Path::parse("y").unwrap(), "read"));
        let s = parse("relation a { opens x/* }").unwrap();
        assert!(s.relation("a").unwrap().opens(&Path::parse("x/1").unwrap(), "read"));
        let s = parse("relation a { opens x for read, write; opens y }  relation b {}").unwrap();
        let a = s.relation("a").unwrap();
        assert_eq!(a.opens.len(), 2);
        assert_eq!(a.opens[0].actions, vec!["read", "write"]);
        assert!(s.relation("b").unwrap().opens.is_empty());
        let s = parse("relation a {\n opens x; opens y;\n}\nrelation c { includes a\n opens z }\n").unwrap();
        assert_eq!(s.relation("c").unwrap().opens.len(), 3);
        let one = parse("relation a { opens x for read }").unwrap();
        assert_eq!(one.relations, parse("relation a {\n opens x\n}").unwrap().relations);
    }

    #[test]
    fn one_line_mistakes_give_one_problem_each() {
        assert_eq!(codes("relation a { includes nobody }\n"), vec![(1, 23, "unknown_relation")]);
        assert_eq!(codes("relation a { opens x y }\n"), vec![(1, 22, "syntax")]);
        assert_eq!(codes("relation a { frobnicate }\n"), vec![(1, 14, "syntax")]);
        assert_eq!(codes("relation a { opens x\n"), vec![(1, 1, "syntax")]);
        assert_eq!(codes("relation a opens x }\n"), vec![(1, 12, "syntax"), (1, 20, "syntax")]);
        assert_eq!(codes("relation a { opens x } }\n"), vec![(1, 24, "syntax")]);
    }

    #[test]
    fn conflicts_parse_in_one_line_and_many() {
        let s =
            parse("relation f { opens location/** }\nconflict empty_home { location/**, calendar/** within 24h }\n")
                .unwrap();
        assert_eq!(s.conflicts.len(), 1);
        let c = &s.conflicts[0];
        assert_eq!((c.name.as_str(), c.window_ms, c.window.as_str()), ("empty_home", 86_400_000, "24h"));
        assert_eq!(c.members.iter().map(|m| m.as_str()).collect::<Vec<_>>(), ["location/**", "calendar/**"]);
        assert_eq!(c.members_of(&Path::parse("calendar/today").unwrap()), 0b10);
        assert_eq!(c.members_of(&Path::parse("vitals/pulse").unwrap()), 0);
        let many = parse("conflict a {\n  x/*\n  y/*, z\n  within 90m\n}\n").unwrap();
        assert_eq!(many.conflicts[0].members.len(), 3);
        assert_eq!(many.conflicts[0].window_ms, 90 * 60_000);
        assert!(many.relations.is_empty());
    }

    #[test]
    fn malformed_conflicts_are_refused_with_their_place() {
        assert_eq!(codes("conflict a { x, y }\n"), vec![(1, 10, "syntax")]);
        assert_eq!(codes("conflict a { x within 1h }\n"), vec![(1, 10, "syntax")]);
        assert_eq!(codes("conflict a { x, y within 0h }\n"), vec![(1, 26, "bad_window")]);
        assert_eq!(codes("conflict a { x, y within 367d }\n"), vec![(1, 26, "bad_window")]);
        assert_eq!(codes("conflict a { x, y within soon }\n"), vec![(1, 26, "bad_window")]);
        assert_eq!(codes("conflict a { x, x within 1h }\n"), vec![(1, 17, "duplicate_pattern")]);
        assert_eq!(codes("conflict a { x y within 1h }\n"), vec![(1, 16, "syntax")]);
        assert_eq!(codes("conflict a { x, y/pri* within 1h }\n"), vec![(1, 17, "bad_pattern")]);
        assert_eq!(
            codes("conflict a { x, y within 1h }\nconflict a { x, y within 1h }\n"),
            vec![(2, 10, "duplicate_conflict")]
        );
        assert_eq!(codes("conflict A { x, y within 1h }\n"), vec![(1, 10, "bad_name")]);
        assert_eq!(codes("conflict a { x, y within 1h\n"), vec![(1, 1, "syntax")]);
        assert_eq!(
            codes("relation r {\nconflict a { x, y within 1h }\n}\n"),
            vec![(2, 1, "syntax"), (2, 14, "syntax"), (3, 1, "syntax")]
        );
        assert_eq!(parse_window("24h"), Ok(86_400_000));
        assert_eq!(parse_window("366d"), Ok(MAX_WINDOW_MS));
        assert!(
            parse_window("h").is_err() && parse_window("-1h").is_err() && parse_window("99999999999999999d").is_err()
        );
    }

    #[test]
    fn size_limits_are_inclusive_and_problems_are_capped() {
        let body = "relation a {\n opens x\n}\n";
        let padded = format!("{body}{}", "#".repeat(MAX_SCHEMA_BYTES - body.len()));
        assert_eq!(padded.len(), MAX_SCHEMA_BYTES);
        assert!(parse(&padded).is_ok(), "exactly the limit parses");
        assert_eq!(codes(&format!("{padded}#")), vec![(1, 1, "too_large")]);
        let many: String = (0..MAX_RELATIONS).map(|i| format!("relation r{i} {{\n}}\n")).collect();
        assert_eq!(parse(&many).unwrap().relations.len(), MAX_RELATIONS);
        let too_many = format!("{many}relation extra {{\n}}\n");
        assert_eq!(codes(&too_many), vec![(1, 1, "too_large")]);
        let noisy: String = (0..MAX_PROBLEMS + 10).map(|_| "bogus\n").collect();
        assert_eq!(parse(&noisy).unwrap_err().len(), MAX_PROBLEMS);
    }
}
