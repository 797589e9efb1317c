//! What both domains share below them: the interned participant id, the persistent collection
//! types every snapshot part is built from, the `Names` a domain reads participants through, the time format of the API, and the reason code of
//! historical answers. Depends on neither domain.

use std::sync::Arc;

use imbl::shared_ptr::DefaultSharedPtr;
use rustc_hash::FxBuildHasher;

use crate::error::{Result, StoreError};

/// Interned participant (an incarnation: a removed and re-created id gets a new `Pid`).
pub type Pid = u32;

pub(crate) type Map<K, V> = Empty<imbl::GenericHashMap<K, V, FxBuildHasher, DefaultSharedPtr>>;
pub(crate) type Vector<A> = imbl::Vector<A>;
pub(crate) type OrdSet<A> = Empty<imbl::OrdSet<A>>;

/// A persistent collection whose empty value costs no allocation of its own: every empty one
/// of a type is a clone of one process-wide empty value, and the first insert copies its root
/// (as a write to any shared root does). Why: an imbl map or ordered set allocates a full root
/// node when it is made (a HAMT node of 32 entries, a B-tree node of 64 keys: 0.5 to 2.5 KiB),
/// and a store holds a few dozen of them, most of them empty for good (no devices, no trust,
/// no idempotency keys): that was most of an idle store's footprint (issue 33,
/// `benches/footprint.rs`). Reads and writes go to the imbl collection through `Deref`.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Empty<T>(T);

impl<T: Default + Clone + Send + Sync + 'static> Default for Empty<T> {
    fn default() -> Self {
        Empty(shared_empty())
    }
}

impl<T> Empty<T> {
    /// The collection itself, for its methods that take it by value.
    pub(crate) fn into_inner(self) -> T {
        self.0
    }
}

impl<T> std::ops::Deref for Empty<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> std::ops::DerefMut for Empty<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Empty<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: FromIterator<A>, A> FromIterator<A> for Empty<T> {
    fn from_iter<I: IntoIterator<Item = A>>(iter: I) -> Self {
        Empty(iter.into_iter().collect())
    }
}

impl<T: IntoIterator> IntoIterator for Empty<T> {
    type Item = T::Item;
    type IntoIter = T::IntoIter;
    fn into_iter(self) -> T::IntoIter {
        self.0.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a Empty<T>
where
    &'a T: IntoIterator,
{
    type Item = <&'a T as IntoIterator>::Item;
    type IntoIter = <&'a T as IntoIterator>::IntoIter;
    fn into_iter(self) -> Self::IntoIter {
        (&self.0).into_iter()
    }
}

impl<T: Extend<A>, A> Extend<A> for Empty<T> {
    fn extend<I: IntoIterator<Item = A>>(&mut self, iter: I) {
        self.0.extend(iter)
    }
}

/// A clone of the one empty `T` of the process (made on first use). Cloning a persistent
/// collection shares its root, so this allocates nothing once the type has been seen.
fn shared_empty<T: Default + Clone + Send + Sync + 'static>() -> T {
    use std::any::{Any, TypeId};
    use std::sync::{OnceLock, RwLock};
    type Empties = RwLock<std::collections::HashMap<TypeId, Box<dyn Any + Send + Sync>, FxBuildHasher>>;
    static EMPTIES: OnceLock<Empties> = OnceLock::new();
    let empties = EMPTIES.get_or_init(Empties::default);
    let id = TypeId::of::<T>();
    if let Some(t) = empties.read().unwrap_or_else(|p| p.into_inner()).get(&id).and_then(|b| b.downcast_ref::<T>()) {
        return t.clone();
    }
    let mut all = empties.write().unwrap_or_else(|p| p.into_inner());
    all.entry(id).or_insert_with(|| Box::new(T::default())).downcast_ref::<T>().map_or_else(T::default, T::clone)
}

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

/// Refuses a window that ends at or before `now_ms`, the time of the write that carries it (the
/// writer's clock when it applies the write, recorded with the revision, so a replay judges it
/// alike): a grant counts while `now < expires_at` and a window holds while `now < not_after`,
/// so such a window would never hold (`window_in_the_past`).
pub(crate) fn check_window_ends_later(field: &'static str, ends_ms: Option<i64>, now_ms: i64) -> Result<()> {
    match ends_ms {
        Some(end) if end <= now_ms => Err(crate::error::StoreError::WindowInThePast {
            field,
            ends_at: format_time(end),
            now: format_time(now_ms),
        }),
        _ => Ok(()),
    }
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
