//! What a commit means to the backend: its ops split into one segment per revision (by the
//! store's meta records), the last-wins net effect on the records, and the binary encoding of
//! a revision's ops in the log.

use std::collections::BTreeMap;

use earshot_store::durable::MetaRecord;
use earshot_store::Op;

use crate::error::{PgError, Result};

/// The key of a store's meta record, written in every revision's commit.
pub const META_KEY: &[u8] = b"m";

/// The ops of one revision, ending with that revision's meta record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub revision: u64,
    pub ops: Vec<Op>,
}

/// Splits a commit into revisions. The store's writer groups several writes into one commit,
/// each ending with a meta record naming its revision; everything up to and including a meta
/// record belongs to that revision, and ops after the last one (never written by the store)
/// join the last revision. Revisions must strictly increase. A commit without any meta record
/// (a sealed context, an audit record outside the revision sequence) yields no segment.
pub fn segments(ops: &[Op]) -> Result<Vec<Segment>> {
    let mut out: Vec<Segment> = Vec::new();
    let mut pending: Vec<Op> = Vec::new();
    for op in ops {
        pending.push(op.clone());
        if let Op::Put(k, v) = op {
            if k.as_slice() == META_KEY {
                let meta: MetaRecord = serde_json::from_slice(v)
                    .map_err(|e| PgError::Corrupt(format!("the commit's meta record is unreadable: {e}")))?;
                if let Some(last) = out.last() {
                    if meta.revision <= last.revision {
                        return Err(PgError::Invalid(format!(
                            "revision {} follows revision {} in one commit",
                            meta.revision, last.revision
                        )));
                    }
                }
                out.push(Segment { revision: meta.revision, ops: std::mem::take(&mut pending) });
            }
        }
    }
    if let Some(last) = out.last_mut() {
        last.ops.extend(pending);
    }
    Ok(out)
}

/// The net effect of ops applied in order: the last op on each key wins (`None` deletes).
pub fn net_effect(ops: &[Op]) -> BTreeMap<&[u8], Option<&[u8]>> {
    let mut net = BTreeMap::new();
    for op in ops {
        match op {
            Op::Put(k, v) => net.insert(k.as_slice(), Some(v.as_slice())),
            Op::Del(k) => net.insert(k.as_slice(), None),
        };
    }
    net
}

const PUT: u8 = b'P';
const DEL: u8 = b'D';

/// Encodes ops for the log: per op a tag (`P` or `D`), the key and, for a put, the value, each
/// preceded by its length as a big-endian u32.
pub fn encode(ops: &[Op]) -> Result<Vec<u8>> {
    let len = |b: &[u8]| {
        u32::try_from(b.len()).map(u32::to_be_bytes).map_err(|_| PgError::Invalid("a record exceeds 4 GiB".into()))
    };
    let mut out = Vec::new();
    for op in ops {
        match op {
            Op::Put(k, v) => {
                out.push(PUT);
                out.extend_from_slice(&len(k)?);
                out.extend_from_slice(k);
                out.extend_from_slice(&len(v)?);
                out.extend_from_slice(v);
            }
            Op::Del(k) => {
                out.push(DEL);
                out.extend_from_slice(&len(k)?);
                out.extend_from_slice(k);
            }
        }
    }
    Ok(out)
}

/// Decodes what [`encode`] wrote; anything else is corruption.
pub fn decode(mut bytes: &[u8]) -> Result<Vec<Op>> {
    fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Result<&'a [u8]> {
        if bytes.len() < n {
            return Err(PgError::Corrupt("a log entry is truncated".into()));
        }
        let (head, rest) = bytes.split_at(n);
        *bytes = rest;
        Ok(head)
    }
    fn field(bytes: &mut &[u8]) -> Result<Vec<u8>> {
        let mut n = [0u8; 4];
        n.copy_from_slice(take(bytes, 4)?);
        Ok(take(bytes, u32::from_be_bytes(n) as usize)?.to_vec())
    }
    let mut ops = Vec::new();
    while let Some((&tag, rest)) = bytes.split_first() {
        bytes = rest;
        match tag {
            PUT => {
                let k = field(&mut bytes)?;
                ops.push(Op::Put(k, field(&mut bytes)?));
            }
            DEL => ops.push(Op::Del(field(&mut bytes)?)),
            other => return Err(PgError::Corrupt(format!("a log entry has an unknown op tag {other}"))),
        }
    }
    Ok(ops)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    fn meta(revision: u64) -> Op {
        let m = MetaRecord { id: "s".into(), name: None, revision, created_at_ms: 0, committed_at_ms: None };
        Op::Put(META_KEY.to_vec(), serde_json::to_vec(&m).unwrap())
    }

    #[test]
    fn log_entries_round_trip() {
        let ops = vec![Op::Put(b"i/a".to_vec(), b"{}".to_vec()), Op::Del(b"x/\0b".to_vec()), Op::Put(vec![], vec![])];
        assert_eq!(decode(&encode(&ops).unwrap()).unwrap(), ops);
        assert!(decode(&encode(&ops).unwrap()[..5]).is_err());
        assert!(decode(b"Z").is_err());
    }

    #[test]
    fn a_group_commit_splits_at_its_meta_records() {
        let a = Op::Put(b"i/a".to_vec(), b"1".to_vec());
        let b = Op::Del(b"i/b".to_vec());
        let s = segments(&[a.clone(), meta(4), b.clone(), meta(5)]).unwrap();
        assert_eq!(
            s,
            vec![Segment { revision: 4, ops: vec![a, meta(4)] }, Segment { revision: 5, ops: vec![b, meta(5)] }]
        );
        assert!(segments(&[meta(5), meta(5)]).is_err());
        assert!(segments(&[Op::Put(b"t/x".to_vec(), vec![])]).unwrap().is_empty());
    }

    #[test]
    fn the_last_op_on_a_key_wins() {
        let ops =
            [Op::Put(b"k".to_vec(), b"1".to_vec()), Op::Del(b"k".to_vec()), Op::Put(b"j".to_vec(), b"2".to_vec())];
        let net = net_effect(&ops);
        assert_eq!(net.get(b"k".as_slice()), Some(&None));
        assert_eq!(net.get(b"j".as_slice()), Some(&Some(b"2".as_slice())));
    }
}
