//! The revision log: one record per revision (`l/` + the revision, big-endian) saying which
//! command made it, with what time and generated ids, and a digest of the records it wrote.
//! Followers on a shared backend replay it; watchers read it. Pruned behind a window.
//!
//! The log is written in the same atomic commit as the revision it describes, as an ordinary
//! on-demand record, so every backend has it with no log concept of its own, and it can never
//! disagree with the records about which revisions exist.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::backend::{Op, META_KEY};
use crate::error::{KernelError, Result};

/// Key prefix of log records (an on-demand prefix: never projected at load).
pub const LOG_PREFIX: u8 = b'l';

/// The key of `revision`'s log record: ordered by revision, bytewise.
pub fn log_key(revision: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(10);
    k.push(LOG_PREFIX);
    k.push(b'/');
    k.extend_from_slice(&revision.to_be_bytes());
    k
}

/// The revision a log key names, if it is one.
pub fn revision_of(key: &[u8]) -> Option<u64> {
    match key {
        [LOG_PREFIX, b'/', rest @ ..] => rest.try_into().ok().map(u64::from_be_bytes),
        _ => None,
    }
}

/// One revision of a store, as its log record keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    pub revision: u64,
    pub committed_at_ms: i64,
    /// The command that made the revision, as the state serialises it (a follower replays it).
    pub command: serde_json::Value,
    /// Ids generated while applying it, in the order they were asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ids: Vec<String>,
    /// Digest of the records the revision wrote (see [`digest`]): a replay must write the same.
    pub digest: String,
    /// What changed, for watchers: kinds and ids, never content.
    pub change: serde_json::Value,
}

impl LogEntry {
    pub fn encode(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(self).map_err(|e| KernelError::Storage(format!("cannot encode a log record: {e}")))
    }

    pub fn decode(store: &str, bytes: &[u8]) -> Result<Self> {
        serde_json::from_slice(bytes)
            .map_err(|e| KernelError::Integrity(format!("store `{store}`: a revision log record is unreadable: {e}")))
    }
}

/// A digest of the records a revision wrote, independent of the order its ops were produced
/// in: the last op on each key wins, keys in byte order, and neither the revision (meta)
/// record nor log records count (they say when, not what).
pub fn digest(ops: &[Op]) -> String {
    let mut net: std::collections::BTreeMap<&[u8], Option<&[u8]>> = std::collections::BTreeMap::new();
    for op in ops {
        match op {
            Op::Put(k, v) => net.insert(k, Some(v)),
            Op::Del(k) => net.insert(k, None),
        };
    }
    let mut h = Sha256::new();
    for (k, v) in net {
        if k == META_KEY || revision_of(k).is_some() {
            continue;
        }
        h.update((k.len() as u64).to_be_bytes());
        h.update(k);
        match v {
            Some(v) => {
                h.update([1]);
                h.update((v.len() as u64).to_be_bytes());
                h.update(v);
            }
            None => h.update([0]),
        }
    }
    hex::encode(&h.finalize()[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_by_revision_and_round_trip() {
        assert!(log_key(255) < log_key(256));
        assert!(log_key(1) < log_key(u64::MAX));
        assert_eq!(revision_of(&log_key(42)), Some(42));
        assert_eq!(revision_of(b"l/short"), None);
        assert_eq!(revision_of(b"i/12345678"), None);
    }

    #[test]
    fn the_digest_sees_records_not_order_or_bookkeeping() {
        let put = |k: &[u8], v: &[u8]| Op::Put(k.to_vec(), v.to_vec());
        let a = [put(b"i/1", b"x"), put(b"i/2", b"y"), put(META_KEY, b"{}"), put(&log_key(3), b"e")];
        let b = [put(b"i/2", b"y"), put(b"i/1", b"x")];
        assert_eq!(digest(&a), digest(&b));
        assert_ne!(digest(&b), digest(&[put(b"i/2", b"y"), put(b"i/1", b"z")]));
        assert_ne!(digest(&b), digest(&[put(b"i/2", b"y"), Op::Del(b"i/1".to_vec())]));
        assert_ne!(digest(&b), digest(&[put(b"i/2", b"y")]));
    }
}
