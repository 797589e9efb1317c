//! The four-fridges run (`earshot demo fridges`): the SharedOS note's household, a deterministic
//! guest that asks for every slice it can name, once through Earshot's gate and once with the
//! gate removed, and a count of forbidden facts that came back, by exact string match.
//!
//! Entitlement here is written out by hand per phase (`Expect`), from the policy as the note
//! states it, not computed by Earshot: otherwise the gated arm would be graded by itself.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use anyhow::{bail, Context};
use earshot_core::condition::RequestContext;
use earshot_store::devices::model::{NewCapability, NewDevice, NewRelation, SchemaInput};
use earshot_store::model::{Command, NewParticipant, ParticipantKind};
use earshot_store::{Earshot, ManualClock, StoreHandle};
use sha2::{Digest, Sha256};

/// The household schema, as checked in at `schema/household.schema`.
pub const HOUSEHOLD_SCHEMA: &str = include_str!("../../../schema/household.schema");

const STORE: &str = "household";
/// 2026-01-01T08:00:00Z: a morning, before the 09:30 meeting.
const NOW_MS: i64 = 1_767_254_400_000;

/// Every slice each fridge holds. The same firmware, the same slices.
const FRIDGE_SLICES: [&str; 7] = [
    "inventory/out-of",
    "status/waking",
    "medication/blood-pressure",
    "medication/insulin",
    "vitals/heart-rate",
    "calendar/next-start",
    "calendar/private",
];
/// The glasses' calendar.
const GLASSES_SLICES: [&str; 2] = ["calendar/next-start", "calendar/private"];

/// One guest reading: who asks, of which device, which slice.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Read {
    pub principal: &'static str,
    pub device: String,
    pub path: &'static str,
}

/// The outcome of one arm: what came back, and the forbidden and permitted facts among it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArmResult {
    pub reads: usize,
    pub forbidden_total: usize,
    pub forbidden_returned: usize,
    pub permitted_total: usize,
    pub permitted_returned: usize,
}

/// The whole run: per phase, the gated and ungated arm, and the narration.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub gated: ArmResult,
    pub ungated: ArmResult,
    pub text: String,
}

/// A fact: synthetic, unguessable without the seed, so a leak is a string match.
fn fact(seed: &str, device: &str, path: &str) -> String {
    let digest = Sha256::digest(format!("{seed}\0{device}\0{path}").as_bytes());
    let tag: String = path.split('/').next().unwrap_or("x").chars().take(3).collect::<String>().to_uppercase();
    format!("{tag}-{}", hex::encode(&digest[..8]))
}

/// The host: every device's slices and their facts. With the gate, a read is answered only
/// when `authorize` allows it; without, the host's permissions are fully open.
struct Host {
    facts: BTreeMap<(String, String), String>,
}

impl Host {
    fn new(seed: &str) -> Self {
        let mut facts = BTreeMap::new();
        for owner in ["me", "mum", "friend", "doc"] {
            let device = format!("{owner}-fridge");
            for path in FRIDGE_SLICES {
                facts.insert((device.clone(), path.to_string()), fact(seed, &device, path));
            }
        }
        for path in GLASSES_SLICES {
            facts.insert(("glasses".to_string(), path.to_string()), fact(seed, "glasses", path));
        }
        Host { facts }
    }

    /// Every (device, path) a guest can name: the host's whole manifest.
    fn manifest(&self) -> Vec<(String, &'static str)> {
        let mut out = Vec::new();
        for owner in ["me", "mum", "friend", "doc"] {
            for path in FRIDGE_SLICES {
                out.push((format!("{owner}-fridge"), path));
            }
        }
        for path in GLASSES_SLICES {
            out.push(("glasses".to_string(), path));
        }
        out
    }

    fn read(&self, h: &StoreHandle, gate: bool, r: &Read) -> anyhow::Result<Option<String>> {
        if gate {
            let d = h.latest().authorize(r.principal, &r.device, r.path, "read", h.now_ms(), &RequestContext::new())?;
            if !d.allowed {
                return Ok(None);
            }
        }
        Ok(self.facts.get(&(r.device.clone(), r.path.to_string())).cloned())
    }
}

/// Which reads the policy entitles, written out by hand from the note's setting.
fn entitled(phase: Phase, r: &Read) -> bool {
    let own = r.device == format!("{}-fridge", r.principal);
    match (r.principal, r.device.as_str(), r.path) {
        // Everyone may read their own fridge, all of it.
        _ if own => true,
        // mum --family--> me: waking status and medication of mum's fridge.
        ("me", "mum-fridge", "status/waking" | "medication/blood-pressure" | "medication/insulin") => true,
        // mum --care_provider--> doc and me --care_provider--> doc: vitals only.
        ("doc", "mum-fridge" | "me-fridge", "vitals/heart-rate") => true,
        // me --family--> mum: my waking status and medication.
        ("mum", "me-fridge", "status/waking" | "medication/blood-pressure" | "medication/insulin") => true,
        // The owner of the glasses reads them; the vacuum reads the next start only, through the
        // chain glasses -> clock -> vacuum, until the root is revoked.
        ("me", "glasses", _) => true,
        ("vacuum", "glasses", "calendar/next-start") => phase == Phase::BeforeRevocation,
        _ => false,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    BeforeRevocation,
    AfterRevocation,
}

fn write(h: &StoreHandle, cmd: Command) -> anyhow::Result<earshot_store::model::WriteOutcome> {
    Ok(h.write(cmd)?)
}

fn participant(h: &StoreHandle, id: &str, kind: ParticipantKind) -> anyhow::Result<()> {
    write(h, Command::CreateParticipant(NewParticipant { id: id.into(), kind, name: None }))?;
    Ok(())
}

fn device(h: &StoreHandle, id: &str, owner: &str) -> anyhow::Result<()> {
    write(h, Command::CreateDevice(NewDevice { id: id.into(), owner: owner.into(), name: None }))?;
    Ok(())
}

fn relation(h: &StoreHandle, grantor: &str, rel: &str, grantee: &str) -> anyhow::Result<()> {
    let id = format!("{grantor}-{rel}-{grantee}");
    let r = NewRelation {
        id: Some(id),
        grantor: grantor.into(),
        relation: rel.into(),
        grantee: grantee.into(),
        constraints: None,
    };
    write(h, Command::CreateRelation(r))?;
    Ok(())
}

fn capability(id: &str, issuer: &str, holder: &str, paths: &[&str], parent: Option<&str>) -> Command {
    Command::CreateCapability(NewCapability {
        id: Some(id.into()),
        issuer: issuer.into(),
        holder: holder.into(),
        device: "glasses".into(),
        paths: paths.iter().map(|p| p.to_string()).collect(),
        actions: vec!["read".into()],
        constraints: None,
        parent: parent.map(str::to_string),
    })
}

/// Builds the household in a fresh in-memory store.
fn household(out: &mut String) -> anyhow::Result<(Earshot, Arc<StoreHandle>)> {
    let earshot = Earshot::temporary(Arc::new(ManualClock::new(NOW_MS)))?;
    earshot.create_store(STORE, Some("four fridges".into()))?;
    let h = earshot.store(STORE)?;
    for p in ["me", "mum", "friend", "doc", "boss"] {
        participant(&h, p, ParticipantKind::Person)?;
    }
    for p in ["me", "mum", "friend", "doc"] {
        device(&h, &format!("{p}-fridge"), p)?;
    }
    for d in ["glasses", "clock", "vacuum"] {
        device(&h, d, "me")?;
    }
    write(&h, Command::PutSchema(SchemaInput { schema: HOUSEHOLD_SCHEMA.to_string() }))?;
    relation(&h, "mum", "family", "me")?;
    relation(&h, "me", "family", "mum")?;
    relation(&h, "mum", "care_provider", "doc")?;
    relation(&h, "me", "care_provider", "doc")?;
    let report = h.latest().schema_view()?;
    writeln!(
        out,
        "relations declared: {}",
        report.relations.iter().map(|r| r.name.as_str()).collect::<Vec<_>>().join(", ")
    )?;
    writeln!(out, "declared but exercised by no edge: {}", report.unexercised.join(", "))?;
    // The chain: the glasses hold their calendar; the clock gets the start time only; the
    // vacuum gets it from the clock.
    write(&h, capability("glasses-root", "me", "glasses", &["calendar/**"], None))?;
    write(&h, capability("clock-cap", "glasses", "clock", &["calendar/next-start"], Some("glasses-root")))?;
    write(&h, capability("vacuum-cap", "clock", "vacuum", &["calendar/next-start"], Some("clock-cap")))?;
    let chain = h.latest().capability_chain("vacuum-cap")?;
    let holders: Vec<String> = chain.chain.iter().map(|c| c.holder.clone()).collect();
    writeln!(out, "chain recorded: {}", holders.join(" -> "))?;
    match h.write(capability("vacuum-wide", "clock", "vacuum", &["calendar/**"], Some("clock-cap"))) {
        Err(e) => writeln!(out, "clock tries to hand the vacuum the whole calendar: refused, {}", e.code())?,
        Ok(_) => bail!("the widening delegation was accepted"),
    }
    Ok((earshot, h))
}

/// The guest: for each principal it acts for, reads every slice of the manifest.
fn guest_reads(host: &Host) -> Vec<Read> {
    let mut reads = Vec::new();
    for principal in ["me", "doc", "mum", "vacuum"] {
        for (device, path) in host.manifest() {
            reads.push(Read { principal, device, path });
        }
    }
    reads
}

fn run_arm(host: &Host, h: &StoreHandle, gate: bool, phase: Phase, acc: &mut ArmResult) -> anyhow::Result<()> {
    for r in guest_reads(host) {
        acc.reads += 1;
        let fact = host.facts.get(&(r.device.clone(), r.path.to_string())).context("manifest and facts disagree")?;
        let returned = host.read(h, gate, &r)?;
        // Exact string match on what came back, as a leak check must be.
        let came_back = returned.as_deref().is_some_and(|s| s.contains(fact.as_str()));
        if entitled(phase, &r) {
            acc.permitted_total += 1;
            acc.permitted_returned += usize::from(came_back);
        } else {
            acc.forbidden_total += 1;
            acc.forbidden_returned += usize::from(came_back);
        }
    }
    Ok(())
}

/// Runs the whole demonstration; deterministic for a given seed.
pub fn run(seed: &str) -> anyhow::Result<Report> {
    let mut report = Report::default();
    let mut out = String::new();
    let (earshot, h) = household(&mut out)?;
    let host = Host::new(seed);
    for (phase, label) in [(Phase::BeforeRevocation, "before"), (Phase::AfterRevocation, "after")] {
        if phase == Phase::AfterRevocation {
            write(&h, Command::RevokeCapability { capability: "glasses-root".into(), by: "me".into() })?;
            let d = h.latest().authorize(
                "vacuum",
                "glasses",
                "calendar/next-start",
                "read",
                h.now_ms(),
                &RequestContext::new(),
            )?;
            writeln!(out, "glasses' root revoked: the vacuum's next read of calendar/next-start is {}", d.reason)?;
        }
        let (mut g, mut u) = (ArmResult::default(), ArmResult::default());
        run_arm(&host, &h, true, phase, &mut g)?;
        run_arm(&host, &h, false, phase, &mut u)?;
        writeln!(out, "phase: {label} revocation")?;
        for (name, a) in [("gated (Earshot)", &g), ("ungated (host fully open)", &u)] {
            writeln!(
                out,
                "  {name:<26} reads {:>3}  forbidden facts returned {:>3} of {:>3}  permitted facts returned {:>3} of {:>3}",
                a.reads, a.forbidden_returned, a.forbidden_total, a.permitted_returned, a.permitted_total
            )?;
        }
        for (acc, a) in [(&mut report.gated, g), (&mut report.ungated, u)] {
            acc.reads += a.reads;
            acc.forbidden_total += a.forbidden_total;
            acc.forbidden_returned += a.forbidden_returned;
            acc.permitted_total += a.permitted_total;
            acc.permitted_returned += a.permitted_returned;
        }
    }
    writeln!(out, "total")?;
    for (name, a) in [("gated (Earshot)", &report.gated), ("ungated (host fully open)", &report.ungated)] {
        writeln!(
            out,
            "  {name:<26} forbidden facts returned {:>3} of {:>3}  permitted facts returned {:>3} of {:>3}",
            a.forbidden_returned, a.forbidden_total, a.permitted_returned, a.permitted_total
        )?;
    }
    earshot.shutdown();
    report.text = out;
    Ok(report)
}
