//! Idempotent retries (issue 10): a store's `Idempotency-Key` records (each key with the
//! fingerprint of the request it was first used for and the answer that request got, kept for
//! [`KEY_TTL_MS`]), and the request digests of item creations, which let an item create
//! retried with the same id and body answer as the first did. Its own part of the composed
//! snapshot and its own records (`q/<key>`, `h/<item>`); `crate::compose` decides when they are
//! consulted and written, always in the revision of the write they belong to.
//!
//! Everything here is a pure function of the state, the command and the command's `now_ms`
//! (expiry and pruning included), so a follower that replays the command reaches the same state.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::common::{Map, OrdSet};
use crate::error::{Result, StoreError};
use crate::kernel::backend::{dec, enc, key, Op};
use crate::memory::layered::FlatVec;
use crate::memory::snapshot::Iid;
use crate::model::{Command, NewItem, OriginInput, WriteOutcome};

/// The SHA-256 of an item create's request (see [`item_digest`]), as bytes. Records spell it in
/// hex ([`ItemDigestRecord`]).
pub(crate) type Digest = [u8; 32];

/// Longest `Idempotency-Key`, in characters (all ASCII, so also bytes).
pub use crate::error::MAX_IDEMPOTENCY_KEY_LEN as MAX_KEY_LEN;

/// How long a key answers retries: 24 hours after the write that recorded it. A client retries
/// within seconds or minutes; a day covers an outage and a retry queue drained the next morning.
pub const KEY_TTL_MS: i64 = 24 * 60 * 60 * 1000;

/// Most expired keys one write deletes. Pruning rides on writes that commit anyway, so a burst
/// of keys expiring together is spread over the next writes instead of making one write
/// arbitrarily large; an expired key still in the records is treated as absent meanwhile.
const PRUNE_PER_WRITE: usize = 64;

const KEY_PREFIX: u8 = b'q';
const ITEM_PREFIX: u8 = b'h';

/// Checks the syntax of an `Idempotency-Key`: 1 to [`MAX_KEY_LEN`] visible ASCII characters.
/// Narrow on purpose: the key is part of a record's key and of logs, and a UUID fits easily.
pub fn check_key(key: &str) -> Result<()> {
    let ok = !key.is_empty() && key.len() <= MAX_KEY_LEN && key.bytes().all(|b| b.is_ascii_graphic());
    if ok {
        Ok(())
    } else {
        Err(StoreError::InvalidIdempotencyKey)
    }
}

/// `command` sent under `key` by `issuer` (the authenticated caller): the command the writer
/// applies, carrying the fingerprint a retry must match.
pub fn keyed(key: String, issuer: &str, command: Command) -> Result<Command> {
    check_key(&key)?;
    if matches!(command, Command::Keyed { .. }) {
        return Err(StoreError::input("command", "a keyed write cannot be keyed again"));
    }
    let fingerprint = fingerprint(issuer, &command)?;
    Ok(Command::Keyed { key, fingerprint, command: Box::new(command) })
}

/// SHA-256 over the caller and the command. The command names its route (one variant per write
/// route), its path parameters and its parsed body; its JSON is canonical because every
/// request struct has a fixed field order (and attributes are sorted maps). The caller is part
/// of it: the same key and body from another caller is a different request.
fn fingerprint(issuer: &str, command: &Command) -> Result<String> {
    let mut h = Sha256::new();
    h.update(b"earshot idempotency-key v1\0");
    h.update(issuer.as_bytes());
    h.update(b"\0");
    h.update(serde_json::to_vec(command).map_err(|e| StoreError::Storage(format!("fingerprint: {e}")))?);
    Ok(hex::encode(h.finalize()))
}

/// The digest of an item create's request, kept with items created under a client id. Sets are
/// sets: the origin's participants and identities and the subjects are sorted and deduplicated
/// first, so a retry that lists them in another order is the same request.
pub(crate) fn item_digest(i: &NewItem) -> Result<Digest> {
    let mut canonical = i.clone();
    if let OriginInput::Viewers(v) = &mut canonical.origin {
        v.participants.sort();
        v.participants.dedup();
        v.identities.sort_by(|a, b| (&a.transport, &a.identifier).cmp(&(&b.transport, &b.identifier)));
        v.identities.dedup();
    }
    canonical.subjects.sort();
    canonical.subjects.dedup();
    digest_of(b"earshot item create v2\0", &canonical)
}

/// The digest the first releases kept (the request as sent, lists in their order): an item
/// created then still answers a retry of the very same request.
pub(crate) fn item_digest_v1(i: &NewItem) -> Result<Digest> {
    digest_of(b"earshot item create v1\0", i)
}

fn digest_of(domain: &[u8], i: &NewItem) -> Result<Digest> {
    let mut h = Sha256::new();
    h.update(domain);
    h.update(serde_json::to_vec(i).map_err(|e| StoreError::Storage(format!("item digest: {e}")))?);
    Ok(h.finalize().into())
}

/// A key's durable record: what the first request under it was and what it answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyRecord {
    pub key: String,
    /// See `fingerprint`.
    pub fingerprint: String,
    /// The `now_ms` of the write that recorded it; the key answers until `+ KEY_TTL_MS`.
    pub recorded_at_ms: i64,
    /// The answer, with the revision and token of the write.
    pub outcome: WriteOutcome,
}

impl KeyRecord {
    fn expires_at_ms(&self) -> i64 {
        self.recorded_at_ms.saturating_add(KEY_TTL_MS)
    }
}

/// The request digest of an item created under a client id (see [`item_digest`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemDigestRecord {
    pub item: String,
    pub digest: String,
}

/// Every idempotency record of one store, decoded.
#[derive(Debug, Clone, Default)]
pub struct IdempotencyRecords {
    pub keys: Vec<KeyRecord>,
    pub items: Vec<ItemDigestRecord>,
}

impl IdempotencyRecords {
    /// Decodes one idempotency record into place; `false` if `k` is not one.
    pub(crate) fn decode(&mut self, k: &[u8], v: &[u8]) -> Result<bool> {
        match k {
            [KEY_PREFIX, b'/', ..] => self.keys.push(dec(k, v)?),
            [ITEM_PREFIX, b'/', ..] => self.items.push(dec(k, v)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Whole records as ops (bulk import).
    pub(crate) fn encode_all(&self, ops: &mut Vec<Op>) -> Result<()> {
        for r in &self.keys {
            ops.push(Op::Put(key(KEY_PREFIX, &r.key), enc(r)?));
        }
        for r in &self.items {
            ops.push(Op::Put(key(ITEM_PREFIX, &r.item), enc(r)?));
        }
        Ok(())
    }
}

/// The idempotency part of a snapshot (persistent maps: cloning is O(1)).
#[derive(Clone, Default)]
pub(crate) struct Idempotency {
    keys: Map<Arc<str>, Arc<KeyRecord>>,
    /// `(expires_at_ms, key)` of every key, so pruning visits only expired ones, in a fixed order.
    expiry: OrdSet<(i64, Arc<str>)>,
    /// Item (its index in the memory domain) → digest of the create request that made it:
    /// `None` for an item made otherwise, and the vector ends at the newest item with a
    /// digest. Indexed, because items are only ever appended: a create appends here (or
    /// replaces an element) instead of copying a path of a map keyed by name, and a digest
    /// costs its 33 bytes, where a map of names to hex strings cost about 130.
    items: FlatVec<Option<Digest>>,
}

/// Idempotency records a command touched (written if present in the new state, else deleted).
#[derive(Debug, Default)]
pub(crate) struct IdempotencyDirty {
    keys: Vec<Arc<str>>,
    /// Items whose digest was recorded, by index and name (the record's key).
    items: Vec<(Iid, Arc<str>)>,
}

impl Idempotency {
    /// The record of `key`, if it still answers at `now_ms`.
    pub(crate) fn live(&self, key: &str, now_ms: i64) -> Option<&KeyRecord> {
        self.keys.get(key).map(|r| &**r).filter(|r| now_ms < r.expires_at_ms())
    }

    /// Records (or replaces an expired) key.
    pub(crate) fn record(&mut self, rec: KeyRecord, dirty: &mut IdempotencyDirty) {
        let name: Arc<str> = Arc::from(rec.key.as_str());
        if let Some(old) = self.keys.get(&name) {
            self.expiry.remove(&(old.expires_at_ms(), name.clone()));
        }
        self.expiry.insert((rec.expires_at_ms(), name.clone()));
        self.keys.insert(name.clone(), Arc::new(rec));
        dirty.keys.push(name);
    }

    /// Deletes up to [`PRUNE_PER_WRITE`] keys expired at `now_ms`, oldest first.
    pub(crate) fn prune(&mut self, now_ms: i64, dirty: &mut IdempotencyDirty) {
        let expired: Vec<(i64, Arc<str>)> =
            self.expiry.iter().take_while(|(at, _)| *at <= now_ms).take(PRUNE_PER_WRITE).cloned().collect();
        for entry in expired {
            self.expiry.remove(&entry);
            self.keys.remove(&entry.1);
            dirty.keys.push(entry.1);
        }
    }

    /// The request digest of item `iid`, if it was created under a client id since digests are
    /// kept.
    pub(crate) fn item_digest(&self, iid: Iid) -> Option<&Digest> {
        self.items.get(iid as usize)?.as_ref()
    }

    /// Keeps the request digest of a newly created item, `iid` named `name`.
    pub(crate) fn record_item(&mut self, iid: Iid, name: &str, digest: Digest, dirty: &mut IdempotencyDirty) {
        set_digest(&mut self.items, iid, digest);
        dirty.items.push((iid, Arc::from(name)));
    }

    /// The ops writing every record `dirty` names, as they are in `self`.
    pub(crate) fn encode(&self, dirty: &IdempotencyDirty, ops: &mut Vec<Op>) -> Result<()> {
        for k in &dirty.keys {
            let rk = key(KEY_PREFIX, k);
            match self.keys.get(k) {
                Some(r) => ops.push(Op::Put(rk, enc(&**r)?)),
                None => ops.push(Op::Del(rk)),
            }
        }
        for (iid, name) in &dirty.items {
            let rk = key(ITEM_PREFIX, name);
            match self.item_digest(*iid) {
                Some(d) => {
                    ops.push(Op::Put(rk, enc(&ItemDigestRecord { item: name.to_string(), digest: hex::encode(d) })?))
                }
                None => ops.push(Op::Del(rk)),
            }
        }
        Ok(())
    }

    /// Sorted-comparable facts of this part (for the live-versus-rebuild check); `name_of`
    /// names an item by its index.
    pub(crate) fn facts(&self, name_of: &dyn Fn(Iid) -> Option<String>, out: &mut Vec<String>) {
        for (k, r) in self.keys.iter() {
            let outcome = serde_json::to_string(&r.outcome).unwrap_or_default();
            out.push(format!("idempotency-key {k} {} {} {outcome}", r.fingerprint, r.recorded_at_ms));
        }
        for (at, k) in self.expiry.iter() {
            out.push(format!("idempotency-expiry {at} {k}"));
        }
        for (i, d) in self.items.iter().enumerate() {
            if let Some(d) = d {
                let name = u32::try_from(i).ok().and_then(name_of).unwrap_or_else(|| format!("#{i} (no such item)"));
                out.push(format!("item-digest {name} {}", hex::encode(d)));
            }
        }
    }
}

impl IdempotencyDirty {
    pub(crate) fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.items.is_empty()
    }
}

/// Element `iid` of `items` set to `digest`, the vector grown to reach it (with `None`s for
/// items without one).
fn set_digest(items: &mut FlatVec<Option<Digest>>, iid: Iid, digest: Digest) {
    let at = iid as usize;
    while items.len() < at {
        items.push_back(None);
    }
    if items.len() == at {
        items.push_back(Some(digest));
    } else {
        items.set(at, Some(digest));
    }
}

/// A digest as records spell it (64 hex digits), back to bytes.
fn parse_digest(hex_digits: &str) -> Option<Digest> {
    let mut out = [0u8; 32];
    hex::decode_to_slice(hex_digits, &mut out).ok()?;
    Some(out)
}

/// Rebuilds the idempotency part from its records; a record that does not add up (a bad key,
/// a key stored under another name, a digest of an item that does not exist, a digest that is
/// not 64 hex digits) refuses the start. `iid_of` finds an item's index by its name.
pub(crate) fn rebuild(r: &IdempotencyRecords, iid_of: &dyn Fn(&str) -> Option<Iid>) -> Result<Idempotency> {
    let mut s = Idempotency::default();
    for rec in &r.keys {
        check_key(&rec.key)
            .map_err(|_| StoreError::Integrity(format!("idempotency record `{}` is malformed", rec.key)))?;
        let name: Arc<str> = Arc::from(rec.key.as_str());
        s.expiry.insert((rec.expires_at_ms(), name.clone()));
        if s.keys.insert(name, Arc::new(rec.clone())).is_some() {
            return Err(StoreError::Integrity(format!("idempotency key `{}` stored twice", rec.key)));
        }
    }
    let mut items: Vec<Option<Digest>> = Vec::new();
    for d in &r.items {
        let Some(iid) = iid_of(&d.item) else {
            return Err(StoreError::Integrity(format!("request digest of unknown item `{}`", d.item)));
        };
        let digest = parse_digest(&d.digest)
            .ok_or_else(|| StoreError::Integrity(format!("request digest of item `{}` is malformed", d.item)))?;
        let at = iid as usize;
        if items.len() <= at {
            items.resize(at + 1, None);
        }
        if items.get_mut(at).and_then(|slot| slot.replace(digest)).is_some() {
            return Err(StoreError::Integrity(format!("request digest of item `{}` stored twice", d.item)));
        }
    }
    s.items = FlatVec::from_vec(items);
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(key: &str, at: i64) -> KeyRecord {
        KeyRecord { key: key.into(), fingerprint: "f".into(), recorded_at_ms: at, outcome: WriteOutcome::default() }
    }

    #[test]
    fn keys_are_bounded_visible_ascii() {
        assert!(check_key("a").is_ok());
        assert!(check_key(&"k".repeat(MAX_KEY_LEN)).is_ok());
        assert!(check_key("6f1c-4e2a_~!").is_ok());
        for bad in ["", " a", "a b", "é", "a\n", &"k".repeat(MAX_KEY_LEN + 1)] {
            assert!(matches!(check_key(bad), Err(StoreError::InvalidIdempotencyKey)), "{bad:?}");
        }
    }

    #[test]
    fn keys_expire_after_the_window_and_prune_in_order_bounded() {
        let mut s = Idempotency::default();
        let mut d = IdempotencyDirty::default();
        for n in 0..(PRUNE_PER_WRITE as i64 + 10) {
            s.record(rec(&format!("k{n}"), n), &mut d);
        }
        assert!(s.live("k0", KEY_TTL_MS - 1).is_some());
        assert!(s.live("k0", KEY_TTL_MS).is_none(), "expired at recorded + TTL");
        let mut d = IdempotencyDirty::default();
        s.prune(KEY_TTL_MS + 1_000_000, &mut d);
        assert_eq!(d.keys.len(), PRUNE_PER_WRITE);
        assert_eq!(&*d.keys[0], "k0");
        let mut d = IdempotencyDirty::default();
        s.prune(KEY_TTL_MS + 1_000_000, &mut d);
        assert_eq!(d.keys.len(), 10);
        assert!(s.keys.is_empty() && s.expiry.is_empty());
    }

    #[test]
    fn a_re_recorded_key_moves_its_expiry() {
        let mut s = Idempotency::default();
        let mut d = IdempotencyDirty::default();
        s.record(rec("k", 0), &mut d);
        s.record(rec("k", KEY_TTL_MS), &mut d);
        assert_eq!(s.expiry.len(), 1);
        let mut d = IdempotencyDirty::default();
        s.prune(KEY_TTL_MS, &mut d);
        assert!(d.keys.is_empty() && s.live("k", KEY_TTL_MS).is_some());
    }

    #[test]
    fn item_digests_are_kept_by_index_and_rebuilt_from_their_records() {
        let names = ["a", "b", "c", "d"];
        let iid_of = |n: &str| names.iter().position(|x| *x == n).map(|i| i as Iid);
        let name_of = |i: Iid| names.get(i as usize).map(|n| n.to_string());
        let (da, dd) = ([1u8; 32], [0xd0u8; 32]);
        let mut s = Idempotency::default();
        let mut dirty = IdempotencyDirty::default();
        // "b" and "c" were made without a client id: no digest, and none is written for them.
        s.record_item(0, "a", da, &mut dirty);
        s.record_item(3, "d", dd, &mut dirty);
        assert_eq!((s.item_digest(0), s.item_digest(1), s.item_digest(2)), (Some(&da), None, None));
        assert_eq!((s.item_digest(3), s.item_digest(4)), (Some(&dd), None));
        let mut ops = Vec::new();
        s.encode(&dirty, &mut ops).unwrap();
        let mut records = IdempotencyRecords::default();
        for op in &ops {
            let Op::Put(k, v) = op else { panic!("a delete: {op:?}") };
            assert!(records.decode(k, v).unwrap());
        }
        assert_eq!(records.items.len(), 2);
        assert_eq!(records.items[1].digest, hex::encode(dd), "records spell digests in hex");
        let again = rebuild(&records, &iid_of).unwrap();
        for iid in 0..5 {
            assert_eq!(again.item_digest(iid), s.item_digest(iid), "item {iid}");
        }
        let (mut live, mut rebuilt) = (Vec::new(), Vec::new());
        s.facts(&name_of, &mut live);
        again.facts(&name_of, &mut rebuilt);
        assert_eq!(live, rebuilt);
        assert_eq!(
            live,
            vec![format!("item-digest a {}", hex::encode(da)), format!("item-digest d {}", hex::encode(dd))]
        );
    }

    #[test]
    fn item_digest_records_that_do_not_add_up_refuse_the_rebuild() {
        let iid_of = |n: &str| (n == "a").then_some(0);
        let record = |item: &str, digest: String| ItemDigestRecord { item: item.into(), digest };
        let good = hex::encode([7u8; 32]);
        for (items, why) in [
            (vec![record("zz", good.clone())], "unknown item"),
            (vec![record("a", good.clone()), record("a", good.clone())], "stored twice"),
            (vec![record("a", "f".repeat(63))], "malformed"),
            (vec![record("a", "g".repeat(64))], "malformed"),
        ] {
            let r = IdempotencyRecords { keys: Vec::new(), items };
            match rebuild(&r, &iid_of) {
                Err(StoreError::Integrity(m)) => assert!(m.contains(why), "{m}"),
                Err(e) => panic!("{why}: {e}"),
                Ok(_) => panic!("{why}: accepted"),
            }
        }
    }

    #[test]
    fn the_fingerprint_covers_the_caller_and_the_command() {
        let c = |id: &str| Command::RemoveParticipant { id: id.into() };
        let f = |issuer: &str, cmd: Command| match keyed("k".into(), issuer, cmd) {
            Ok(Command::Keyed { fingerprint, .. }) => fingerprint,
            other => panic!("{other:?}"),
        };
        assert_eq!(f("a", c("x")), f("a", c("x")));
        assert_ne!(f("a", c("x")), f("b", c("x")));
        assert_ne!(f("a", c("x")), f("a", c("y")));
        assert!(keyed(
            "k".into(),
            "a",
            Command::Keyed { key: "k".into(), fingerprint: "f".into(), command: Box::new(c("x")) }
        )
        .is_err());
    }
}
