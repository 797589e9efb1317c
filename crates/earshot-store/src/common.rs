//! What both domains share below them: the interned participant id, the persistent collection
//! types every snapshot part is built from, the `Names` a domain reads participants through, the time format of the API, and the reason code of
//! historical answers. Depends on neither domain.

use std::sync::Arc;

use imbl::shared_ptr::DefaultSharedPtr;
use rustc_hash::FxBuildHasher;

use crate::error::{Result, StoreError};

/// Interned participant (an incarnation: a removed and re-created id gets a new `Pid`).
pub type Pid = u32;

pub(crate) type Map<K, V> = imbl::GenericHashMap<K, V, FxBuildHasher, DefaultSharedPtr>;
pub(crate) type Vector<A> = imbl::Vector<A>;
pub(crate) type OrdSet<A> = imbl::OrdSet<A>;

/// The participants' names, as a domain that refers to participants without owning them (the
/// device domain: owners, devices, holders and issuers are participants) reads them.
pub(crate) trait Names {
    /// The participant named `name`, if there is one.
    fn pid(&self, name: &str) -> Option<Pid>;
    /// The name of `pid` (`?` if unknown).
    fn part_name(&self, pid: Pid) -> Arc<str>;
}

/// The reason code of every decision read at a revision older than the newest.
pub const HISTORICAL_REASON: &str = "denied_historical_revision";

/// Formats milliseconds since the epoch as RFC 3339 (UTC, millisecond precision).
pub fn format_time(ms: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms.max(0) as u64);
    humantime::format_rfc3339_millis(t).to_string()
}

/// Parses an RFC 3339 instant into milliseconds since the epoch.
pub fn parse_time(field: &'static str, s: &str) -> Result<i64> {
    // humantime reads only UTC (`Z`); an RFC 3339 numeric offset is split off and applied here.
    // RFC 3339 requires a zone: an instant without `Z` or an offset is ambiguous (whose local
    // time?), so it is refused rather than read as UTC.
    let (utc, offset_ms) = match split_offset(s) {
        Some(split) => split,
        // `parse_rfc3339_weak` reads a zone-less date-time as UTC, which is what `Z` means.
        None if s.ends_with(['Z', 'z']) => (s.get(..s.len() - 1).unwrap_or_default(), 0),
        None => {
            return Err(StoreError::input(
                field,
                "not an RFC 3339 time: it needs a zone, `Z` or a numeric offset such as `+01:00`",
            ))
        }
    };
    let t = humantime::parse_rfc3339_weak(utc)
        .map_err(|e| StoreError::input(field, format!("not an RFC 3339 time: {e}")))?;
    let d = t.duration_since(std::time::UNIX_EPOCH).map_err(|_| StoreError::input(field, "time before 1970"))?;
    let ms = i64::try_from(d.as_millis()).map_err(|_| StoreError::input(field, "time out of range"))?;
    ms.checked_sub(offset_ms).filter(|ms| *ms >= 0).ok_or_else(|| StoreError::input(field, "time before 1970"))
}

/// Splits a numeric offset (`+01:00`, `-05:30`) off the end of an RFC 3339 date-time: the rest,
/// and the offset in milliseconds east of UTC.
fn split_offset(s: &str) -> Option<(&str, i64)> {
    let at = s.len().checked_sub(6)?;
    let (head, tail) = (s.get(..at)?, s.get(at..)?);
    let &[sign, h1, h2, b':', m1, m2] = tail.as_bytes() else { return None };
    let sign = match sign {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digit = |b: u8| b.is_ascii_digit().then(|| i64::from(b - b'0'));
    let (h, m) = (digit(h1)? * 10 + digit(h2)?, digit(m1)? * 10 + digit(m2)?);
    if h > 23 || m > 59 || !head.contains(['T', ' ']) {
        return None;
    }
    Some((head, sign * (h * 60 + m) * 60_000))
}
