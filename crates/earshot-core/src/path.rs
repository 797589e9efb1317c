//! Slice paths and path patterns (SPEC §2.1): segment-wise matching with `*` and `**`, and the
//! containment of one pattern in another that delegation checks. Never string prefixes.
//!
//! A path is `/`-separated segments of `[A-Za-z0-9._-]`, e.g. `calendar/next-start`. A pattern
//! may also use `*` for exactly one segment and, as its last segment only, `**` for one or more
//! remaining segments: `medication/**` opens everything below `medication`, not `medication`
//! itself. A wildcard is always a whole segment: `priv*` is refused, so `calendar/private` can
//! never be opened by a pattern that merely shares its first letters.

use std::fmt;

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
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Segment {
    /// Matches exactly this segment.
    Literal(Box<str>),
    /// `*`: matches any one segment.
    Any,
}

/// A validated path pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PathPattern {
    segments: Box<[Segment]>,
    /// A trailing `**`: one or more further segments.
    rest: bool,
    source: Box<str>,
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
        let mut segments = Vec::with_capacity(parts.len());
        let mut rest = false;
        for (i, seg) in parts.iter().enumerate() {
            match *seg {
                "" => return Err(PathError::EmptySegment(i)),
                "**" if i + 1 == parts.len() => rest = true,
                "**" => return Err(PathError::DoubleStarNotLast),
                "*" => segments.push(Segment::Any),
                s if s.contains('*') => return Err(PathError::PartialWildcard(s.chars().take(64).collect())),
                s => {
                    check_literal(s)?;
                    segments.push(Segment::Literal(s.into()));
                }
            }
        }
        Ok(PathPattern { segments: segments.into(), rest, source: s.into() })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The segments before any trailing `**`.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Whether the pattern ends in `**`.
    pub fn has_rest(&self) -> bool {
        self.rest
    }

    /// The literal segments before the first wildcard: every path the pattern matches starts
    /// with them, which is what the capability index keys on.
    pub fn literal_prefix(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().map_while(|s| match s {
            Segment::Literal(l) => Some(&**l),
            Segment::Any => None,
        })
    }

    /// Whether the concrete path matches the pattern, segment by segment.
    pub fn matches(&self, path: &Path<'_>) -> bool {
        let segs = path.segments();
        let fixed = self.segments.len();
        let len_ok = if self.rest { segs.len() > fixed } else { segs.len() == fixed };
        len_ok
            && self.segments.iter().zip(segs).all(|(p, s)| match p {
                Segment::Any => true,
                Segment::Literal(l) => **l == **s,
            })
    }

    /// Whether every path this pattern matches is also matched by `parent` (delegation narrows).
    pub fn within(&self, parent: &PathPattern) -> bool {
        let (n, m) = (self.segments.len(), parent.segments.len());
        // The shortest path this pattern matches must be long enough for the parent, and if the
        // parent has no `**`, every length this pattern admits must equal the parent's.
        let lengths_ok = if parent.rest { n + usize::from(self.rest) > m } else { !self.rest && n == m };
        lengths_ok
            && parent.segments.iter().zip(self.segments.iter()).all(|(q, p)| match (q, p) {
                (Segment::Any, _) => true,
                (Segment::Literal(q), Segment::Literal(p)) => q == p,
                (Segment::Literal(_), Segment::Any) => false,
            })
    }
}

impl fmt::Display for PathPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl serde::Serialize for PathPattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.source)
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
        assert_eq!(q.segments(), &[Segment::Literal("calendar".into()), Segment::Any]);
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
}
