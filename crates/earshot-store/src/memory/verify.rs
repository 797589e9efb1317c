//! Index agreement: the live projection must equal a fresh rebuild from the durable records.
//!
//! Both snapshots are rendered as sorted lists of facts in external terms (names and digests,
//! never interned ids), including every posting list, and compared. The provenance graph of
//! the rebuild is checked against the items' recorded sources.

use earshot_core::Currentness;

use crate::error::{Result, StoreError};
use crate::memory::durable::{rebuild, Records};
use crate::memory::snapshot::{Members, Snapshot};

/// Every fact a snapshot holds, in external terms, sorted.
pub fn facts(s: &Snapshot) -> Vec<String> {
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
        let current = match i.current {
            Currentness::Current => "current".to_string(),
            Currentness::NotCurrent { state, ancestor } => {
                format!("blocked {:?} {}", state, ancestor.map(item_name).unwrap_or_default())
            }
        };
        let sources: Vec<String> = i.sources().iter().map(|x| item_name(*x)).collect();
        let grants: Vec<String> = i.grants().iter().filter_map(|g| s.grant(*g)).map(|g| g.name.to_string()).collect();
        out.push(format!(
            "item #{iid} {} owner={} aud={} {:?} {current} sources={sources:?} grants={grants:?} by={:?} rev={}",
            i.name,
            s.part_name(i.owner),
            aud_name(i.aud),
            i.state,
            i.superseded_by().map(item_name),
            i.created_rev
        ));
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
    device_facts(s, &mut out);
    out.sort();
    out
}

/// The device half (SPEC §2): schema, devices, edges, capabilities and their indexes.
fn device_facts(s: &Snapshot, out: &mut Vec<String>) {
    let d = &s.dev;
    let cap_name = |c: u32| d.cap(c).map(|r| r.name.to_string()).unwrap_or_else(|| format!("?{c}"));
    let edge_name = |e: u32| d.edge(e).map(|r| r.name.to_string()).unwrap_or_else(|| format!("?{e}"));
    if let Some(schema) = &d.schema {
        out.push(format!("schema {:?}", schema.source));
    }
    for (dev, owner) in d.devices.iter() {
        out.push(format!("device {} owner={}", s.part_name(*dev), s.part_name(*owner)));
    }
    for (eid, e) in d.edges.iter().enumerate() {
        out.push(format!(
            "edge #{eid} {} {}--{}-->{} {:?} left={:?} revoked={} rev={} at={}",
            e.name,
            s.part_name(e.grantor),
            e.relation,
            s.part_name(e.grantee),
            e.constraints,
            e.uses_left,
            e.revoked,
            e.created_rev,
            e.created_at_ms
        ));
    }
    for (cid, c) in d.caps.iter().enumerate() {
        let paths: Vec<&str> = c.paths.iter().map(|p| p.as_str()).collect();
        out.push(format!(
            "capability #{cid} {} holder={} issuer={} device={} {paths:?} {:?} {:?} left={:?} parent={:?} depth={} revoked={} rev={} at={}",
            c.name,
            s.part_name(c.holder),
            s.part_name(c.issuer),
            s.part_name(c.device),
            c.actions,
            c.constraints,
            c.uses_left,
            c.parent.map(cap_name),
            c.depth,
            c.revoked,
            c.created_rev,
            c.created_at_ms
        ));
    }
    for ((g, e), list) in d.edges_by_pair.iter() {
        let v: Vec<String> = list.iter().map(|x| edge_name(*x)).collect();
        out.push(format!("posting edges {}->{} {v:?}", s.part_name(*g), s.part_name(*e)));
    }
    for ((h, dev, n, hash), node) in d.cap_nodes.iter() {
        let exact: Vec<String> = node.exact.iter().map(|x| cap_name(*x)).collect();
        let rest: Vec<String> = node.rest.iter().map(|x| cap_name(*x)).collect();
        out.push(format!(
            "capability-trie {} {} {n}:{hash:016x} exact={exact:?} rest={rest:?}",
            s.part_name(*h),
            s.part_name(*dev)
        ));
    }
    for (p, kids) in d.children.iter() {
        let v: Vec<String> = kids.iter().map(|x| cap_name(*x)).collect();
        out.push(format!("posting children {} {v:?}", cap_name(*p)));
    }
    for (name, e) in d.edge_ids.iter() {
        out.push(format!("name edge {name} #{e}"));
    }
    for (name, c) in d.cap_ids.iter() {
        out.push(format!("name capability {name} #{c}"));
    }
}

/// Compares `live` with a rebuild from `records`; the error names the first few differences.
pub fn agreement(live: &Snapshot, records: &Records) -> Result<String> {
    let (rebuilt, graph) = rebuild(live.store(), records)?;
    for (iid, item) in rebuilt.items.iter().enumerate() {
        let mut expected = item.sources().to_vec();
        expected.sort_unstable();
        if graph.sources_of(iid as u32) != expected {
            return Err(StoreError::Integrity(format!("provenance graph disagrees at item `{}`", item.name)));
        }
    }
    let a = facts(live);
    let b = facts(&rebuilt);
    if a == b {
        return Ok(format!("revision {}, {} items, {} facts agree", live.revision, live.items.len(), a.len()));
    }
    let only_live: Vec<&String> = a.iter().filter(|x| b.binary_search(x).is_err()).take(5).collect();
    let only_disk: Vec<&String> = b.iter().filter(|x| a.binary_search(x).is_err()).take(5).collect();
    Err(StoreError::Integrity(format!(
        "index disagrees with records: only in index {only_live:?}; only on disk {only_disk:?}"
    )))
}
