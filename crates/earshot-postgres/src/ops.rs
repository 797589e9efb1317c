//! What a commit means to the backend: its ops split into one segment per revision (by the
//! store's meta records) and the last-wins net effect on the records.

use std::collections::BTreeMap;

use earshot_kernel::backend::MetaRecord;
use earshot_kernel::Op;

use crate::error::{PgError, Result};

/// The key of a store's meta record, written in every revision's commit.
pub const META_KEY: &[u8] = b"m";

/// The ops of one revision, ending with that revision's meta record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub revision: u64,
    /// The store incarnation its meta record names.
    pub incarnation: Option<String>,
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
                if out.first().is_some_and(|first: &Segment| first.incarnation != meta.incarnation) {
                    return Err(PgError::Invalid("one commit names two incarnations of its store".into()));
                }
                out.push(Segment {
                    revision: meta.revision,
                    incarnation: meta.incarnation,
                    ops: std::mem::take(&mut pending),
                });
            }
        }
    }
    if let Some(last) = out.last_mut() {
        last.ops.extend(pending);
    }
    Ok(out)
}

/// Whether `key` is an on-demand record (content, the revision log, sealed contexts, attempts):
/// never loaded with the rest, so never kept in the history either.
pub fn on_demand(key: &[u8]) -> bool {
    key.get(1) == Some(&b'/') && key.first().is_some_and(|p| earshot_kernel::backend::ON_DEMAND_PREFIXES.contains(p))
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

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    fn meta(revision: u64) -> Op {
        let m = MetaRecord {
            id: "s".into(),
            name: None,
            revision,
            created_at_ms: 0,
            committed_at_ms: None,
            incarnation: None,
        };
        Op::Put(META_KEY.to_vec(), serde_json::to_vec(&m).unwrap())
    }

    #[test]
    fn a_group_commit_splits_at_its_meta_records() {
        let a = Op::Put(b"i/a".to_vec(), b"1".to_vec());
        let b = Op::Del(b"i/b".to_vec());
        let s = segments(&[a.clone(), meta(4), b.clone(), meta(5)]).unwrap();
        assert_eq!(
            s,
            vec![
                Segment { revision: 4, incarnation: None, ops: vec![a, meta(4)] },
                Segment { revision: 5, incarnation: None, ops: vec![b, meta(5)] }
            ]
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
