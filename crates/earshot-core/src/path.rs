//! Slice paths and path patterns (SPEC §2.1): segment-wise matching with `*` and `**`, and the
//! containment of one pattern in another that delegation checks. Never string prefixes.
//!
//! A path is `/`-separated segments of `[A-Za-z0-9._-]`, e.g. `calendar/next-start`. A pattern
//! may also use `*` for exactly one segment and, as its last segment only, `**` for one or more
//! remaining segments: `medication/**` opens everything below `medication`, not `medication`
//! itself. A wildcard is always a whole segment: `priv*` is refused, so `calendar/private` can
//! never be opened by a pattern that merely shares its first letters.

use std::fmt;

use crate::compact::InlineStr;

/// Longest path or pattern, in bytes.
pub const MAX_PATH_LEN: usize = 256;
/// Most segments in a path or pattern.
pub const MAX_SEGMENTS: usize = 16;
/// Longest segment, in bytes.
pub const MAX_SEGMENT_LEN: usize = 64;

/// Why a path or pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("is empty")]
    Empty,
    #[error("is longer than {MAX_PATH_LEN} bytes")]
    TooLong,
    #[error("has more than {MAX_SEGMENTS} segments")]
    TooManySegments,
    #[error("has an empty segment at position {0} (leading, trailing or doubled `/`)")]
    EmptySegment(usize),
    #[error("segment `{0}` may only use letters, digits, `.`, `_` and `-` (and not be `.` or `..`)")]
    BadSegment(String),
    #[error("segment `{0}…` is longer than {MAX_SEGMENT_LEN} bytes")]
    SegmentTooLong(String),
    #[error("segment `{0}` mixes a wildcard with other characters; `*` and `**` must be whole segments")]
    PartialWildcard(String),
    #[error("`**` may only be the last segment")]
    DoubleStarNotLast,
    #[error("a path names one slice and cannot contain the wildcard `{0}`")]
    WildcardInPath(String),
}

/// One segment of a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Segment<'a> {
    /// Matches exactly this segment.
    Literal(&'a str),
    /// `*`: matches any one segment.
    Any,
}

/// Bytes of a pattern kept inside the pattern itself; longer ones go to the heap. With the
/// segment table this makes a `PathPattern` 64 bytes, so a capability's patterns are read
/// where its slice of patterns is, without a further dependent read per pattern or segment.
const INLINE_TEXT: usize = 38;

type Text = InlineStr<INLINE_TEXT>;

/// A validated path pattern: its text and a table of where each segment starts, in one
/// value (SPEC §2.1). Matching reads nothing else.
#[derive(Clone)]
pub struct PathPattern {
    /// Byte offset in `text` where segment `i` starts (segments before any trailing `**`).
    starts: [u8; MAX_SEGMENTS],
    /// Segments before any trailing `**`.
    len: u8,
    /// A trailing `**`: one or more further segments.
    rest: bool,
    /// Bit `i`: segment `i` is `*`.
    any: u16,
    text: Text,
}

impl PartialEq for PathPattern {
    fn eq(&self, other: &Self) -> bool {
        // Everything else is a function of the text.
        self.text.bytes() == other.text.bytes()
    }
}

impl Eq for PathPattern {}

impl std::hash::Hash for PathPattern {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.text.bytes().hash(state);
    }
}

impl fmt::Debug for PathPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PathPattern").field(&self.as_str()).finish()
    }
}

fn check_literal(seg: &str) -> Result<(), PathError> {
    let ok_chars = seg.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if seg.len() > MAX_SEGMENT_LEN && ok_chars {
        // Name the real cause: the characters are fine, the segment is too long.
        return Err(PathError::SegmentTooLong(seg.chars().take(16).collect()));
    }
    if seg.len() > MAX_SEGMENT_LEN || !ok_chars || seg == "." || seg == ".." {
        return Err(PathError::BadSegment(seg.chars().take(MAX_SEGMENT_LEN).collect()));
    }
    Ok(())
}

fn split(s: &str) -> Result<std::str::Split<'_, char>, PathError> {
    if s.is_empty() {
        return Err(PathError::Empty);
    }
    if s.len() > MAX_PATH_LEN {
        return Err(PathError::TooLong);
    }
    if s.split('/').count() > MAX_SEGMENTS {
        return Err(PathError::TooManySegments);
    }
    Ok(s.split('/'))
}

impl PathPattern {
    /// Parses and validates a pattern.
    pub fn parse(s: &str) -> Result<Self, PathError> {
        let parts: Vec<&str> = split(s)?.collect();
        let mut starts = [0u8; MAX_SEGMENTS];
        let (mut len, mut any, mut rest, mut at) = (0usize, 0u16, false, 0usize);
        for (i, seg) in parts.iter().enumerate() {
            match *seg {
                "" => return Err(PathError::EmptySegment(i)),
                "**" if i + 1 == parts.len() => rest = true,
                "**" => return Err(PathError::DoubleStarNotLast),
                "*" => any |= 1 << i,
                s if s.contains('*') => return Err(PathError::PartialWildcard(s.chars().take(64).collect())),
                s => check_literal(s)?,
            }
            if !rest {
                // A segment starts before the last byte of a pattern of at most
                // `MAX_PATH_LEN` (256) bytes, so it fits a `u8`; `split` bounds the count.
                let (Some(slot), Ok(start)) = (starts.get_mut(i), u8::try_from(at)) else {
                    return Err(PathError::TooLong);
                };
                *slot = start;
                len = i + 1;
            }
            at += seg.len() + 1;
        }
        let len = u8::try_from(len).map_err(|_| PathError::TooManySegments)?;
        Ok(PathPattern { starts, len, rest, any, text: Text::new(s) })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        self.text.as_str()
    }

    /// Segments before any trailing `**`.
    pub fn segment_count(&self) -> usize {
        usize::from(self.len)
    }

    /// The bytes of segment `i` (a literal, or `*`).
    fn segment_bytes(&self, i: usize) -> &[u8] {
        let t = self.text.bytes();
        let start = self.starts.get(i).map_or(t.len(), |s| usize::from(*s));
        let end = if i + 1 < usize::from(self.len) {
            self.starts.get(i + 1).map_or(t.len(), |s| usize::from(*s).saturating_sub(1))
        } else if self.rest {
            t.len().saturating_sub(3)
        } else {
            t.len()
        };
        t.get(start..end).unwrap_or(&[])
    }

    fn is_any(&self, i: usize) -> bool {
        self.any & (1 << i) != 0
    }

    /// Segment `i` before any trailing `**`.
    fn segment(&self, i: usize) -> Segment<'_> {
        if self.is_any(i) {
            Segment::Any
        } else {
            // Validated ASCII, cut at segment boundaries.
            Segment::Literal(std::str::from_utf8(self.segment_bytes(i)).unwrap_or_default())
        }
    }

    /// The segments before any trailing `**`.
    pub fn segments(&self) -> impl ExactSizeIterator<Item = Segment<'_>> + '_ {
        (0..usize::from(self.len)).map(|i| self.segment(i))
    }

    /// Whether the pattern ends in `**`.
    pub fn has_rest(&self) -> bool {
        self.rest
    }

    /// The literal segments before the first wildcard: every path the pattern matches starts
    /// with them, which is what the capability index keys on.
    pub fn literal_prefix(&self) -> impl Iterator<Item = &str> {
        self.segments().map_while(|s| match s {
            Segment::Literal(l) => Some(l),
            Segment::Any => None,
        })
    }

    /// Whether the concrete path matches the pattern, segment by segment.
    pub fn matches(&self, path: &Path<'_>) -> bool {
        let segs = path.segments();
        let fixed = usize::from(self.len);
        let len_ok = if self.rest { segs.len() > fixed } else { segs.len() == fixed };
        len_ok
            && segs.iter().take(fixed).enumerate().all(|(i, s)| self.is_any(i) || self.segment_bytes(i) == s.as_bytes())
    }

    /// Whether every path this pattern matches is also matched by `parent` (delegation narrows).
    pub fn within(&self, parent: &PathPattern) -> bool {
        let (n, m) = (usize::from(self.len), usize::from(parent.len));
        // The shortest path this pattern matches must be long enough for the parent, and if the
        // parent has no `**`, every length this pattern admits must equal the parent's.
        let lengths_ok = if parent.rest { n + usize::from(self.rest) > m } else { !self.rest && n == m };
        lengths_ok
            && (0..m.min(n)).all(|i| match (parent.is_any(i), self.is_any(i)) {
                (true, _) => true,
                (false, false) => parent.segment_bytes(i) == self.segment_bytes(i),
                (false, true) => false,
            })
    }
}

impl fmt::Display for PathPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for PathPattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The patterns of one capability: one held inline (nearly always), or several shared. Reads as
/// a slice of patterns; a decision over a one-pattern capability reads its pattern where it
/// reads the capability, with no further dependent read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Patterns {
    One(PathPattern),
    Many(std::sync::Arc<[PathPattern]>),
}

impl std::ops::Deref for Patterns {
    type Target = [PathPattern];
    fn deref(&self) -> &[PathPattern] {
        match self {
            Patterns::One(p) => std::slice::from_ref(p),
            Patterns::Many(s) => s,
        }
    }
}

impl From<Vec<PathPattern>> for Patterns {
    fn from(mut v: Vec<PathPattern>) -> Self {
        match (v.pop(), v.is_empty()) {
            (Some(p), true) => Patterns::One(p),
            (Some(p), false) => {
                v.push(p);
                Patterns::Many(v.into())
            }
            (None, _) => Patterns::Many(v.into()),
        }
    }
}

/// A validated concrete path, split into segments without allocating.
#[derive(Debug, Clone, Copy)]
pub struct Path<'a> {
    segs: [&'a str; MAX_SEGMENTS],
    len: usize,
    source: &'a str,
}

impl<'a> Path<'a> {
    /// Parses a concrete path: no wildcards.
    pub fn parse(s: &'a str) -> Result<Self, PathError> {
        // One pass over the string: this runs on every decision.
        if s.is_empty() {
            return Err(PathError::Empty);
        }
        if s.len() > MAX_PATH_LEN {
            return Err(PathError::TooLong);
        }
        let mut segs = [""; MAX_SEGMENTS];
        let mut len = 0;
        for (i, seg) in s.split('/').enumerate() {
            if i >= MAX_SEGMENTS {
                return Err(PathError::TooManySegments);
            }
            if seg.is_empty() {
                return Err(PathError::EmptySegment(i));
            }
            if seg.contains('*') {
                return Err(PathError::WildcardInPath(seg.chars().take(64).collect()));
            }
            check_literal(seg)?;
            if let Some(slot) = segs.get_mut(i) {
                *slot = seg;
            }
            len = i + 1;
        }
        Ok(Path { segs, len, source: s })
    }

    pub fn segments(&self) -> &[&'a str] {
        self.segs.get(..self.len).unwrap_or(&[])
    }

    pub fn as_str(&self) -> &'a str {
        self.source
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> PathPattern {
        PathPattern::parse(s).unwrap()
    }

    fn m(pattern: &str, path: &str) -> bool {
        p(pattern).matches(&Path::parse(path).unwrap())
    }

    #[test]
    fn matching_is_segment_wise() {
        assert!(m("calendar/next-start", "calendar/next-start"));
        assert!(!m("calendar/next-start", "calendar/next-start/x"));
        assert!(!m("calendar/next", "calendar/next-start"));
        assert!(m("calendar/*", "calendar/private"));
        assert!(!m("calendar/*", "calendar"));
        assert!(!m("calendar/*", "calendar/a/b"));
        assert!(m("medication/**", "medication/a"));
        assert!(m("medication/**", "medication/a/b/c"));
        assert!(!m("medication/**", "medication"));
        assert!(!m("medication/**", "medications/a"));
        assert!(m("*/waking", "status/waking"));
        assert!(m("**", "anything/at/all"));
    }

    #[test]
    fn wildcards_are_whole_segments() {
        assert_eq!(PathPattern::parse("calendar/priv*"), Err(PathError::PartialWildcard("priv*".into())));
        assert_eq!(PathPattern::parse("a/**/b"), Err(PathError::DoubleStarNotLast));
        assert_eq!(PathPattern::parse("a//b"), Err(PathError::EmptySegment(1)));
        assert_eq!(PathPattern::parse("/a"), Err(PathError::EmptySegment(0)));
        assert_eq!(PathPattern::parse(""), Err(PathError::Empty));
        assert!(matches!(PathPattern::parse("a/../b"), Err(PathError::BadSegment(_))));
        assert!(matches!(PathPattern::parse("a/b c"), Err(PathError::BadSegment(_))));
        assert!(matches!(Path::parse("a/*"), Err(PathError::WildcardInPath(_))));
        assert!(matches!(PathPattern::parse(&"a/".repeat(MAX_SEGMENTS + 1)), Err(PathError::TooManySegments)));
    }

    #[test]
    fn containment() {
        assert!(p("calendar/next-start").within(&p("calendar/**")));
        assert!(p("calendar/next-start").within(&p("calendar/*")));
        assert!(p("calendar/*").within(&p("calendar/**")));
        assert!(p("calendar/a/**").within(&p("calendar/**")));
        assert!(p("calendar/**").within(&p("calendar/**")));
        assert!(!p("calendar/**").within(&p("calendar/*")));
        assert!(!p("calendar/**").within(&p("calendar/next-start")));
        assert!(!p("calendar/*").within(&p("calendar/next-start")));
        assert!(!p("calendar").within(&p("calendar/**")));
        assert!(!p("calendar/private").within(&p("calendar/next-start")));
        assert!(p("a/b").within(&p("*/b")));
        assert!(!p("*/b").within(&p("a/b")));
        assert!(p("a/**").within(&p("*/**")));
        assert!(p("a/b/**").within(&p("a/*/**")));
        assert!(!p("a/**").within(&p("a/*/**")));
        assert!(p("a/*/**").within(&p("a/**")));
    }

    #[test]
    fn literal_prefix_stops_at_the_first_wildcard() {
        assert_eq!(p("a/b/*/c").literal_prefix().collect::<Vec<_>>(), vec!["a", "b"]);
        assert_eq!(p("a/b/**").literal_prefix().collect::<Vec<_>>(), vec!["a", "b"]);
        assert_eq!(p("*/b").literal_prefix().count(), 0);
    }

    #[test]
    fn limits_are_inclusive() {
        let seg = "s".repeat(MAX_SEGMENT_LEN);
        assert!(PathPattern::parse(&seg).is_ok());
        // An over-long segment of good characters is refused for its length (issue 9: the
        // message used to blame the characters); a long one with a bad character for those.
        let too_long = PathPattern::parse(&format!("{seg}s"));
        assert!(matches!(too_long, Err(PathError::SegmentTooLong(_))), "{too_long:?}");
        assert!(Path::parse(&format!("a/{seg}s")).is_err_and(|e| e.to_string().contains("longer than 64 bytes")));
        assert!(matches!(PathPattern::parse(&format!("{seg} ")), Err(PathError::BadSegment(_))));
        let sixteen = vec!["a"; MAX_SEGMENTS].join("/");
        assert!(PathPattern::parse(&sixteen).is_ok());
        assert!(Path::parse(&sixteen).is_ok());
        assert_eq!(PathPattern::parse(&format!("{sixteen}/a")), Err(PathError::TooManySegments));
        assert!(matches!(Path::parse(&format!("{sixteen}/a")), Err(PathError::TooManySegments)));
        let long = format!("{}/{}/{}/{}", "a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(63));
        assert_eq!(long.len(), MAX_PATH_LEN - 1);
        let exact = format!("{long}e");
        assert!(PathPattern::parse(&exact).is_ok() && Path::parse(&exact).is_ok(), "exactly the limit");
        assert_eq!(PathPattern::parse(&format!("{exact}e")), Err(PathError::TooLong));
        assert!(matches!(Path::parse(&format!("{exact}e")), Err(PathError::TooLong)));
    }

    #[test]
    fn accessors_show_the_pattern_as_written() {
        let q = p("calendar/*/**");
        assert_eq!(q.as_str(), "calendar/*/**");
        assert_eq!(q.to_string(), "calendar/*/**");
        assert_eq!(q.segments().collect::<Vec<_>>(), vec![Segment::Literal("calendar"), Segment::Any]);
        assert!(q.has_rest());
        assert!(!p("calendar/*").has_rest());
        let path = Path::parse("calendar/next-start").unwrap();
        assert_eq!(path.as_str(), "calendar/next-start");
        assert_eq!(path.segments(), &["calendar", "next-start"]);
    }

    #[test]
    fn a_shorter_pattern_is_not_within_a_longer_one_sharing_its_prefix() {
        assert!(!p("a").within(&p("a/b")));
        assert!(!p("a/*").within(&p("a/*/c")));
    }

    #[test]
    fn a_pattern_is_one_64_byte_value_and_long_ones_match_alike() {
        assert_eq!(std::mem::size_of::<PathPattern>(), 64);
        // Inline (at most 38 bytes) and heap text must behave the same, at every boundary.
        let short = "a/*/ccccc/**";
        let long = format!("{}/*/{}/**", "a".repeat(40), "c".repeat(60));
        assert!(p(short).text.is_inline() && !p(&long).text.is_inline());
        assert!(m(short, "a/x/ccccc/d"));
        assert!(!m(short, "a/x/cccc/d") && !m(short, "a/x/ccccc") && !m(short, "b/x/ccccc/d"));
        let a40 = "a".repeat(40);
        let c60 = "c".repeat(60);
        assert!(m(&long, &format!("{a40}/x/{c60}/d")));
        assert!(!m(&long, &format!("{a40}/x/{c60}")));
        assert!(!m(&long, &format!("{a40}/x/{}/d", "c".repeat(59))));
        assert_eq!(p(&long).as_str(), long);
        assert_eq!(
            p(&long).segments().collect::<Vec<_>>(),
            vec![Segment::Literal(&a40), Segment::Any, Segment::Literal(&c60)]
        );
        // Sixteen segments of the longest total length: the last one's start still fits.
        let sixteen: Vec<String> = (0..MAX_SEGMENTS).map(|i| format!("{i:0>15}")).collect();
        let full = sixteen.join("/");
        assert_eq!(full.len(), MAX_PATH_LEN - 1);
        assert!(m(&full, &full));
        assert_eq!(p(&full).segments().last(), Some(Segment::Literal(&sixteen[15])));
        let other = format!("{}x", &full[..full.len() - 1]);
        assert!(!m(&full, &other));
        assert!(p(&full).within(&p(&full)) && !p(&full).within(&p(&other)));
        // Equal text, equal pattern; `**` alone has no segments.
        assert_eq!(p(&long), p(&long.clone()));
        assert_eq!(p("**").segment_count(), 0);
        assert!(m("**", "x"));
    }

    #[test]
    fn patterns_read_as_the_slice_they_were_made_from() {
        let one: Patterns = vec![p("a/*")].into();
        assert!(matches!(one, Patterns::One(_)));
        assert_eq!(&*one, &[p("a/*")]);
        let two: Patterns = vec![p("a/*"), p("b/**")].into();
        assert!(matches!(two, Patterns::Many(_)));
        assert_eq!(&*two, &[p("a/*"), p("b/**")]);
        let none: Patterns = Vec::new().into();
        assert!(none.is_empty());
    }
}
