//! Index agreement, device part: the facts of the device half of a snapshot (schema, devices,
//! edges, capabilities, recorded uses and their indexes) in external terms, for `crate::compose::agreement`.

use super::DeviceState;
use crate::common::Names;

/// The device half (SPEC §2): schema, devices, edges, capabilities and their indexes.
pub(crate) fn facts(d: &DeviceState, names: &dyn Names, out: &mut Vec<String>) {
    let cap_name = |c: u32| d.cap(c).map(|r| r.name.to_string()).unwrap_or_else(|| format!("?{c}"));
    let edge_name = |e: u32| d.edge(e).map(|r| r.name.to_string()).unwrap_or_else(|| format!("?{e}"));
    // A removed participant by its name and removal, never by an interned id (a rebuild gives
    // it another one).
    let party = |p: crate::common::Pid| match d.removed.get(&p) {
        Some(r) => format!("{} (removed in {})", r.name, r.revision),
        None => names.part_name(p).to_string(),
    };
    if let Some(schema) = &d.schema {
        out.push(format!("schema {:?}", schema.source));
    }
    for (dev, owner) in d.devices.iter() {
        out.push(format!("device {} owner={}", party(*dev), party(*owner)));
    }
    for (eid, e) in d.edges.iter().enumerate() {
        out.push(format!(
            "edge #{eid} {} {}--{}-->{} {:?} left={:?} revoked={} rev={} at={}",
            e.name,
            party(e.grantor),
            e.relation,
            party(e.grantee),
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
            "capability #{cid} {} holder={} issuer={} device={} {paths:?} {:?} {:?} {:?} left={:?} parent={:?} depth={} revoked={} rev={} at={}",
            c.name,
            party(c.holder),
            party(c.issuer),
            party(c.device),
            c.actions,
            c.constraints,
            c.window,
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
        out.push(format!("posting edges {}->{} {v:?}", party(*g), party(*e)));
    }
    for ((h, dev, n, hash), node) in d.trie.iter() {
        let exact: Vec<String> = node.exact().iter().map(|x| cap_name(*x)).collect();
        let rest: Vec<String> = node.rest().iter().map(|x| cap_name(*x)).collect();
        out.push(format!(
            "capability-trie {} {} {n}:{hash:016x} exact={exact:?} rest={rest:?} kids={}",
            party(*h),
            party(*dev),
            node.kids()
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
    for (n, u) in d.uses.iter().enumerate() {
        out.push(format!(
            "use #{n} {} principal={} device={} grantor={} {} {} at={} rev={}",
            u.name,
            party(u.principal),
            party(u.device),
            party(u.grantor),
            u.path,
            u.action,
            u.at_ms,
            u.created_rev
        ));
    }
    for ((p, g), list) in d.uses_by_pair.iter() {
        let v: Vec<String> =
            list.iter().map(|x| d.uses.get(*x as usize).map(|u| u.name.to_string()).unwrap_or_default()).collect();
        out.push(format!("posting uses {}->{} {v:?}", party(*p), party(*g)));
    }
}
