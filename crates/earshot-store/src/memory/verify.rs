//! Index agreement, memory part: the facts of the memory half of a snapshot in external terms,
//! and the check of a rebuilt provenance graph; `crate::compose::agreement` compares the live
//! projection with a fresh rebuild from the durable records.
//!
//! Both snapshots are rendered as sorted lists of facts in external terms (names and digests,
//! never interned ids), including every posting list, and compared. The provenance graph of
//! the rebuild is checked against the items' recorded sources.

use earshot_core::Currentness;

use crate::error::{Result, StoreError};
use crate::memory::graph::Provenance;
use crate::memory::snapshot::{Members, MemorySnapshot};

/// Every fact the memory part of a snapshot holds, in external terms, sorted.
pub fn facts(s: &MemorySnapshot) -> Vec<String> {
    let item_name = |i: u32| s.item(i).map(|r| r.name.to_string()).unwrap_or_else(|| format!("?{i}"));
    let aud_name = |a: u32| s.aud(a).map(|r| r.digest.to_hex()).unwrap_or_else(|| format!("?{a}"));
    let mut out = vec![format!("revision {}", s.revision)];
    for p in s.parts.iter().flatten() {
        out.push(format!("participant {} {:?} {:?}", p.name, p.kind, p.display));
    }
    for (k, v) in s.idents.iter() {
        let mut names: Vec<String> = v.iter().map(|p| s.part_name(*p).to_string()).collect();
        names.sort();
        out.push(format!("identity {:?} {names:?}", k));
    }
    for a in s.auds.iter().filter(|a| a.live) {
        let kind = match a.members {
            Members::Everyone => "everyone",
            Members::Only(_) => "members",
        };
        out.push(format!("audience {} {:?} {kind} {:?}", a.digest.to_hex(), a.kind, s.member_names(a)));
    }
    for (iid, i) in s.items.iter().enumerate() {
        let current = match i.current() {
            Currentness::Current => "current".to_string(),
            Currentness::NotCurrent { state, ancestor } => {
                format!("blocked {:?} {}", state, ancestor.map(item_name).unwrap_or_default())
            }
        };
        let sources: Vec<String> = i.sources().iter().map(|x| item_name(*x)).collect();
        let grants: Vec<String> = i.grants().iter().filter_map(|g| s.grant(*g)).map(|g| g.name.to_string()).collect();
        // The name table: every name leads to its item, and no summary a check would use is
        // stale (the rebuild's lines are fresh, so any lie here is a disagreement).
        let line = if s.item_line_agrees(iid as u32) { "line ok" } else { "line disagrees" };
        out.push(format!(
            "item #{iid} {} {line} owner={} author={} aud={} {:?} {current} sources={sources:?} grants={grants:?} by={:?} rev={}",
            i.name,
            s.part_name(i.owner),
            s.part_name(i.author()),
            aud_name(i.aud),
            i.state(),
            i.superseded_by().map(item_name),
            i.created_rev
        ));
    }
    for i in s.items.iter().filter(|i| !i.subjects().is_empty()) {
        out.push(format!("subjects {} {:?}", i.name, i.subjects()));
    }
    for g in s.grants.iter() {
        if let Some(c) = g.consent.as_deref() {
            out.push(format!("consent {} {:?}", g.name, c));
        }
    }
    for (gid, g) in s.grants.iter().enumerate() {
        out.push(format!(
            "grant #{gid} {} item={} aud={} issuer={} reason={:?} at={} exp={:?} revoked={}",
            g.name,
            item_name(g.item),
            aud_name(g.aud),
            g.issuer,
            g.reason,
            g.created_at_ms,
            g.expires_at_ms,
            g.revoked
        ));
    }
    for (p, auds) in s.part_auds.iter() {
        let mut d: Vec<String> = auds.iter().map(|a| aud_name(*a)).collect();
        d.sort();
        out.push(format!("posting participant {} {d:?}", s.part_name(*p)));
    }
    for (a, items) in s.aud_items.iter() {
        let v: Vec<String> = items.iter().map(item_name).collect();
        out.push(format!("posting audience-items {} {v:?}", aud_name(*a)));
    }
    for (a, grants) in s.aud_grants.iter() {
        let v: Vec<String> = grants.iter().filter_map(|g| s.grant(g)).map(|g| g.name.to_string()).collect();
        out.push(format!("posting audience-grants {} {v:?}", aud_name(*a)));
    }
    for (o, items) in s.owner_items.iter() {
        let v: Vec<String> = items.iter().map(item_name).collect();
        out.push(format!("posting owner-items {} {v:?}", s.part_name(*o)));
    }
    for (o, items) in s.owner_public.iter() {
        let v: Vec<String> = items.iter().map(item_name).collect();
        out.push(format!("posting owner-public {} {v:?}", s.part_name(*o)));
    }
    crate::memory::trust::facts(s, &mut out);
    out.sort();
    out
}

/// Checks the provenance graph of a rebuild against its items' recorded sources.
pub(crate) fn graph_agrees(rebuilt: &MemorySnapshot, graph: &Provenance) -> Result<()> {
    for (iid, item) in rebuilt.items.iter().enumerate() {
        let mut expected = item.sources().to_vec();
        expected.sort_unstable();
        if graph.sources_of(iid as u32) != expected {
            return Err(StoreError::Integrity(format!("provenance graph disagrees at item `{}`", item.name)));
        }
    }
    Ok(())
}

/// The ordered digest index (`aud_order`) holds exactly the live audiences' digests.
pub(crate) fn audience_order_agrees(s: &MemorySnapshot) -> Result<()> {
    let ordered =
        s.aud_order.len() == s.aud_by_digest.len() && s.aud_order.iter().all(|d| s.aud_by_digest.contains_key(d));
    if ordered {
        Ok(())
    } else {
        Err(StoreError::Integrity(format!(
            "the audience order index holds {} digests for {} live audiences",
            s.aud_order.len(),
            s.aud_by_digest.len()
        )))
    }
}
