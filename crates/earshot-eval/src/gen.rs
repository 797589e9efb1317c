//! The controlled generator: multi-party histories whose ledger (participants, containers,
//! audiences, lifecycle, grants, gold evidence) is fixed before any text is rendered, from a
//! seed, without any model call.
//!
//! Each history has an owner and five other participants, one-to-one containers with each of
//! them and two group containers across three transports, and these questions:
//! - five temporal-update questions, one per distractor dose d ∈ {0, 1, 2, 4, 8}: the asker's
//!   fact recorded one-to-one and its update recorded in a group (gold: both), plus d
//!   same-predicate facts about other participants recorded where the asker was absent;
//! - cross-channel recall: a fact said in a group, asked one-to-one; its superseded older
//!   version was said one-to-one (gold: the new one);
//! - a derived summary: an intersection of a one-to-one fact and a group fact (gold: all three);
//! - a grant: a fact said to another participant, declassified to the asker (gold: it), next
//!   to one that was not;
//! - a group question, asked in a group, with same-predicate facts said one-to-one;
//! - abstention: the only evidence was said to someone else (no gold; any evidence is forbidden).
//!
//! Background chatter fills the rest. The generator also labels, independently of the store,
//! which items each question's container may admit (the reference the forbidden counts use).

use std::collections::{BTreeMap, BTreeSet};

use earshot_core::{AudienceDigest, AudienceKind, State};
use earshot_store::durable::{
    AudienceRecord, ContentRecord, GrantRecord, IdentityRecord, ItemRecord, MetaRecord, ParticipantRecord, Records,
};
use earshot_store::model::ParticipantKind;

/// The distractor doses of the temporal-update questions.
pub const DOSES: [u32; 5] = [0, 1, 2, 4, 8];

/// A small deterministic generator (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        let i = self.below(xs.len());
        &xs[i.min(xs.len().saturating_sub(1))]
    }
}

const NAMES: [&str; 14] = [
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "niaj", "olivia",
    "peggy",
];
const PREDICATES: [&str; 32] = [
    "dentist appointment",
    "flight booking",
    "piano recital",
    "job interview",
    "lease renewal",
    "car service",
    "book club meeting",
    "birthday dinner",
    "hospital checkup",
    "visa interview",
    "wedding rehearsal",
    "tax filing",
    "school pickup",
    "garden project",
    "team offsite",
    "yoga class",
    "vet visit",
    "passport renewal",
    "moving day",
    "concert tickets",
    "football practice",
    "bank loan",
    "insurance claim",
    "painting lesson",
    "charity run",
    "kitchen renovation",
    "camping trip",
    "court hearing",
    "exam results",
    "violin lesson",
    "hair appointment",
    "volunteer shift",
];
const VALUES: [&str; 16] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "march",
    "april",
    "june",
    "lisbon",
    "oslo",
    "noon",
    "evening",
    "morning",
    "midnight",
];
const FILLER: [&str; 24] = [
    "apparently",
    "honestly",
    "again",
    "later",
    "probably",
    "anyway",
    "quickly",
    "today",
    "really",
    "maybe",
    "also",
    "still",
    "definitely",
    "soon",
    "luckily",
    "sadly",
    "finally",
    "now",
    "though",
    "indeed",
    "almost",
    "basically",
    "clearly",
    "perhaps",
];
const TRANSPORTS: [&str; 3] = ["email", "chat", "sms"];

/// The identifier of a participant on a transport (an address, an account, a number).
pub fn identifier(transport: &str, participant: &str) -> String {
    match transport {
        "email" => format!("{participant}@example.com"),
        "sms" => {
            // Unique per participant (a collision would bind one number to two people, which
            // the store then reads as the later binding): history number and name's place.
            let (h, name) = participant.split_once('.').unwrap_or(("h0", participant));
            let h: u64 = h.trim_start_matches('h').parse().unwrap_or(0);
            let n = NAMES.iter().position(|x| *x == name).unwrap_or(NAMES.len()) as u64;
            format!("+1{:010}", h * 16 + n)
        }
        _ => format!("U{}", participant.replace('.', "_").to_uppercase()),
    }
}

/// Who may see an item: everyone, or a set of participant ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Aud {
    Public,
    Members(BTreeSet<String>),
}

impl Aud {
    /// `V ⊆ A`.
    pub fn contains(&self, v: &BTreeSet<String>) -> bool {
        match self {
            Aud::Public => true,
            Aud::Members(m) => v.is_subset(m),
        }
    }
}

/// One memory item as the generator's ledger knows it.
#[derive(Debug, Clone)]
pub struct GenItem {
    pub name: String,
    /// The container it was recorded in (index into `History::channels`), if any.
    pub channel: Option<usize>,
    pub audience: Aud,
    pub current: bool,
    pub grants: Vec<BTreeSet<String>>,
}

/// A container of a history: a conversation on one transport with a fixed set of viewers.
#[derive(Debug, Clone)]
pub struct Channel {
    pub transport: &'static str,
    /// Viewers, owner included.
    pub viewers: BTreeSet<String>,
}

/// The kinds of question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Temporal,
    CrossChannel,
    Derived,
    Grant,
    Group,
    Abstention,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Temporal => "temporal_update",
            Kind::CrossChannel => "cross_channel",
            Kind::Derived => "derived",
            Kind::Grant => "grant",
            Kind::Group => "group",
            Kind::Abstention => "abstention",
        }
    }
}

/// A question: asked in one container, with the entitled gold evidence.
#[derive(Debug, Clone)]
pub struct Question {
    pub kind: Kind,
    /// The distractor dose (temporal-update questions only).
    pub dose: Option<u32>,
    pub channel: usize,
    pub query: String,
    pub gold: Vec<String>,
}

/// One history: its owner, containers, items (in creation order) and questions.
#[derive(Debug, Clone)]
pub struct History {
    pub owner: String,
    pub channels: Vec<Channel>,
    pub items: Vec<GenItem>,
    pub questions: Vec<Question>,
    /// The history's own durable records (for the flat evaluator).
    pub records: Records,
}

impl History {
    /// The reference admission: current, and some authorized audience contains every viewer.
    pub fn admits(&self, item: &GenItem, viewers: &BTreeSet<String>) -> bool {
        item.current && (item.audience.contains(viewers) || item.grants.iter().any(|g| viewers.is_subset(g)))
    }
}

/// Builds one history's ledger and records. `seq` is the next global item sequence number.
struct Builder<'a> {
    h: usize,
    rng: &'a mut Rng,
    owner: String,
    channels: Vec<Channel>,
    items: Vec<GenItem>,
    records: Records,
    audiences: BTreeMap<Vec<String>, String>,
    seq: &'a mut u32,
    grant_seq: &'a mut u32,
    contents: BTreeMap<String, String>,
}

impl Builder<'_> {
    fn pid(&self, name: &str) -> String {
        format!("h{}.{name}", self.h)
    }

    fn digest_of(&mut self, members: &BTreeSet<String>) -> String {
        let sorted: Vec<String> = members.iter().cloned().collect();
        if let Some(d) = self.audiences.get(&sorted) {
            return d.clone();
        }
        let kind = AudienceKind::of_members(sorted.len());
        let hex = AudienceDigest::compute(kind, &sorted).to_hex();
        self.records.audiences.push(AudienceRecord { digest: hex.clone(), kind, members: sorted.clone() });
        self.audiences.insert(sorted, hex.clone());
        hex
    }

    fn filler(&mut self, max: usize) -> String {
        let n = self.rng.below(max + 1);
        (0..n).map(|_| *self.rng.pick(&FILLER)).collect::<Vec<_>>().join(" ")
    }

    /// Records an item said in `channel` (its audience is that container's viewers).
    fn say(&mut self, tag: &str, channel: usize, text: String) -> String {
        let viewers = self.channels.get(channel).map(|c| c.viewers.clone()).unwrap_or_default();
        self.push(tag, Some(channel), Aud::Members(viewers), Vec::new(), text)
    }

    fn push(&mut self, tag: &str, channel: Option<usize>, audience: Aud, sources: Vec<String>, text: String) -> String {
        let name = format!("h{}.{tag}{}", self.h, self.items.len());
        let digest = match &audience {
            Aud::Public => AudienceDigest::compute::<&str>(AudienceKind::Public, &[]).to_hex(),
            Aud::Members(m) => {
                let m = m.clone();
                self.digest_of(&m)
            }
        };
        self.records.items.push(ItemRecord {
            subjects: Vec::new(),
            id: name.clone(),
            seq: *self.seq,
            owner: self.owner.clone(),
            audience: digest,
            sources,
            state: State::Active,
            superseded_by: None,
            created_rev: 2,
            created_at_ms: 0,
            author: None,
            author_unknown: false,
            author_removed: false,
        });
        *self.seq += 1;
        self.contents.insert(name.clone(), text);
        self.items.push(GenItem { name: name.clone(), channel, audience, current: true, grants: Vec::new() });
        name
    }

    fn supersede(&mut self, old: &str, by: &str) {
        if let Some(r) = self.records.items.iter_mut().find(|r| r.id == old) {
            r.state = State::Superseded;
            r.superseded_by = Some(by.to_string());
        }
        if let Some(i) = self.items.iter_mut().find(|i| i.name == old) {
            i.current = false;
        }
    }

    fn grant(&mut self, item: &str, to: &str) {
        let members: BTreeSet<String> = [self.owner.clone(), to.to_string()].into();
        let digest = self.digest_of(&members);
        let id = format!("h{}.g{}", self.h, *self.grant_seq);
        self.records.grants.push(GrantRecord {
            consent: None,
            id,
            seq: *self.grant_seq,
            item: item.to_string(),
            audience: digest,
            issuer: "eval".into(),
            reason: Some("declassified for the evaluation".into()),
            created_at_ms: 0,
            created_rev: 2,
            expires_at_ms: None,
            revoked: false,
        });
        *self.grant_seq += 1;
        if let Some(i) = self.items.iter_mut().find(|i| i.name == item) {
            i.grants.push(members);
        }
    }
}

/// Generates history `h` from its own seed.
fn history(h: usize, seed: u64, seq: &mut u32, grant_seq: &mut u32) -> History {
    let mut rng = Rng::new(seed ^ (h as u64).wrapping_mul(0xA24B_AED4_963E_E407));
    // Six distinct names: the owner's contacts are five of them.
    let mut names: Vec<&str> = Vec::new();
    while names.len() < 5 {
        let n = *rng.pick(&NAMES);
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let owner = format!("h{h}.owner");
    let mut b = Builder {
        h,
        rng: &mut rng,
        owner: owner.clone(),
        channels: Vec::new(),
        items: Vec::new(),
        records: Records::default(),
        audiences: BTreeMap::new(),
        seq,
        grant_seq,
        contents: BTreeMap::new(),
    };
    let pids: Vec<String> = names.iter().map(|n| b.pid(n)).collect();
    b.records.participants.push(ParticipantRecord { id: owner.clone(), kind: ParticipantKind::Agent, name: None });
    for p in &pids {
        b.records.participants.push(ParticipantRecord { id: p.clone(), kind: ParticipantKind::Person, name: None });
    }
    // Containers: one-to-one with each contact (0..5), group A = {0,1,2}, group B = {2,3,4}.
    for p in &pids {
        let transport = *b.rng.pick(&TRANSPORTS);
        // Each contact is known on its one-to-one transport by an identity of that transport.
        b.records.identities.push(IdentityRecord {
            transport: transport.into(),
            identifier: identifier(transport, p),
            participants: vec![p.clone()],
        });
        b.channels.push(Channel { transport, viewers: [owner.clone(), p.clone()].into() });
    }
    let group = |ix: &[usize]| -> BTreeSet<String> {
        ix.iter().filter_map(|i| pids.get(*i).cloned()).chain([owner.clone()]).collect()
    };
    b.channels.push(Channel { transport: "chat", viewers: group(&[0, 1, 2]) });
    b.channels.push(Channel { transport: "email", viewers: group(&[2, 3, 4]) });
    const GROUP_A: usize = 5;
    const GROUP_B: usize = 6;
    // Predicates: a distinct one per question.
    let mut preds: Vec<&str> = Vec::new();
    while preds.len() < 11 {
        let p = *b.rng.pick(&PREDICATES);
        if !preds.contains(&p) {
            preds.push(p);
        }
    }
    let mut questions = Vec::new();
    let mut pred_at = 0;
    let mut next_pred = || {
        let p = preds.get(pred_at).copied().unwrap_or("plan");
        pred_at += 1;
        p
    };

    // Temporal updates, one per dose. The asker is contact 0, 1 or 2 (members of group A).
    for dose in DOSES {
        let pred = next_pred();
        let s = b.rng.below(3);
        let sn = names[s];
        let (v1, v2) = (*b.rng.pick(&VALUES), *b.rng.pick(&VALUES));
        let f = b.filler(6);
        let first = b.say("t", s, format!("{sn} mentioned the {pred} is on {v1} {f}"));
        let f = b.filler(6);
        let update = b.say("t", GROUP_A, format!("group news {f} {sn} says the {pred} now happens {v2}"));
        // Distractors about other participants, said where the asker was absent.
        for n in 0..dose as usize {
            let t = [3usize, 4, (s + 1) % 3, (s + 2) % 3][n % 4];
            let tn = names[t];
            let v = *b.rng.pick(&VALUES);
            let f = b.filler(2);
            let channel = if t >= 3 && n % 2 == 1 { GROUP_B } else { t };
            b.say("t", channel, format!("{tn} {pred} moved to {v} the {pred} {f}"));
        }
        questions.push(Question {
            kind: Kind::Temporal,
            dose: Some(dose),
            channel: s,
            query: format!("when is {sn} {pred}"),
            gold: vec![first, update],
        });
    }

    // Cross-channel recall with a superseded older fact.
    {
        let pred = next_pred();
        let s = b.rng.below(3);
        let sn = names[s];
        let f = b.filler(4);
        let v = *b.rng.pick(&VALUES);
        let old = b.say("x", s, format!("the {pred} for {sn} is {v} {f}"));
        let f = b.filler(4);
        let v = *b.rng.pick(&VALUES);
        let new = b.say("x", GROUP_A, format!("{f} we agreed the {pred} for {sn} changes to {v}"));
        b.supersede(&old, &new);
        questions.push(Question {
            kind: Kind::CrossChannel,
            dose: None,
            channel: s,
            query: format!("{sn} {pred} latest"),
            gold: vec![new],
        });
    }

    // A derived summary (intersection of a one-to-one fact and a group fact).
    {
        let pred = next_pred();
        let s = b.rng.below(3);
        let sn = names[s];
        let f = b.filler(4);
        let a = b.say("d", s, format!("{sn} wants the {pred} budget kept small {f}"));
        let f = b.filler(4);
        let c = b.say("d", GROUP_A, format!("{f} the group set the {pred} date with {sn}"));
        let aud_of = |n: &str| b.items.iter().find(|i| i.name == n).map(|i| i.audience.clone());
        // Intersection (SPEC §1.5): the sources' origin audiences, never their grants.
        let aud = match (aud_of(&a), aud_of(&c)) {
            (Some(Aud::Members(x)), Some(Aud::Members(y))) => Aud::Members(x.intersection(&y).cloned().collect()),
            (Some(Aud::Members(m)), _) | (_, Some(Aud::Members(m))) => Aud::Members(m),
            _ => Aud::Public,
        };
        let summary =
            b.push("d", None, aud, vec![a.clone(), c.clone()], format!("summary of {sn} {pred} budget and date"));
        questions.push(Question {
            kind: Kind::Derived,
            dose: None,
            channel: s,
            query: format!("{sn} {pred} summary"),
            gold: vec![summary, a, c],
        });
    }

    // A grant: a fact said to contact 3 about a shared plan, declassified to the asker.
    {
        let pred = next_pred();
        let s = b.rng.below(3);
        let (sn, tn) = (names[s], names[3]);
        let f = b.filler(4);
        let v = *b.rng.pick(&VALUES);
        let granted = b.say("g", 3, format!("{tn} asked to tell {sn} the {pred} is {v} {f}"));
        let asker = pids.get(s).cloned().unwrap_or_default();
        b.grant(&granted, &asker);
        let f = b.filler(2);
        b.say("g", 3, format!("{tn} private {pred} worries {f} {pred}"));
        questions.push(Question {
            kind: Kind::Grant,
            dose: None,
            channel: s,
            query: format!("{sn} {pred}"),
            gold: vec![granted],
        });
    }

    // A group question, with same-predicate facts said one-to-one to group members.
    {
        let pred = next_pred();
        let f = b.filler(5);
        let gold = b.say("q", GROUP_B, format!("everyone here {f} confirmed the {pred} plan"));
        for t in [3usize, 4] {
            let tn = names[t];
            let f = b.filler(2);
            b.say("q", t, format!("{tn} secretly dislikes the {pred} plan {pred} {f}"));
        }
        questions.push(Question {
            kind: Kind::Group,
            dose: None,
            channel: GROUP_B,
            query: format!("what is the {pred} plan"),
            gold: vec![gold],
        });
    }

    // Abstention: the only evidence was said one-to-one to someone else.
    {
        let pred = next_pred();
        let s = b.rng.below(3);
        let t = 3 + b.rng.below(2);
        let tn = names[t];
        let f = b.filler(3);
        b.say("a", t, format!("{tn} told me about the {pred} {f}"));
        questions.push(Question {
            kind: Kind::Abstention,
            dose: None,
            channel: s,
            query: format!("{tn} {pred}"),
            gold: vec![],
        });
    }

    // Background chatter in every container, and a public note.
    let chatter = 10 + b.rng.below(8);
    for _ in 0..chatter {
        let channel = b.rng.below(7);
        let who = names[b.rng.below(5)];
        let f = b.filler(8);
        let extra = *b.rng.pick(&PREDICATES);
        b.say("c", channel, format!("{who} chatted {f} about {extra} nothing decided"));
    }
    let f = b.filler(5);
    b.push("p", None, Aud::Public, Vec::new(), format!("public notice {f} the office moved"));

    let mut records = std::mem::take(&mut b.records);
    records.contents = std::mem::take(&mut b.contents)
        .into_iter()
        .map(|(k, v)| {
            let embedding = Some(embed(&v));
            (k, ContentRecord { content: Some(v), attributes: None, embedding })
        })
        .collect();
    History { owner, channels: b.channels, items: b.items, questions, records }
}

/// Dimensions of the evaluation's embeddings.
pub const EMBEDDING_DIMENSION: usize = 64;

/// A deterministic embedding of a text, with no model: a hashed bag of words projected at
/// random (each distinct lower-cased word a fixed pseudo-random ±1 vector from its FNV-1a
/// hash, summed over the words), then normalised as a `cosine` store keeps it. Texts sharing
/// words point the same way; nothing else is learnt.
pub fn embed(text: &str) -> Vec<f32> {
    let mut v = [0.0f64; EMBEDDING_DIMENSION];
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in word.to_lowercase().bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        for x in &mut v {
            // xorshift64 from the word's hash: one bit per dimension.
            h ^= h << 13;
            h ^= h >> 7;
            h ^= h << 17;
            *x += if h & 1 == 0 { 1.0 } else { -1.0 };
        }
    }
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm == 0.0 {
        // No word at all: a fixed direction, so the item still has a valid embedding.
        let mut e = vec![0.0f32; EMBEDDING_DIMENSION];
        e[0] = 1.0;
        return e;
    }
    v.iter().map(|x| (x / norm) as f32).collect()
}

/// Every history of a run, and the store's records for all of them (items and grants in
/// creation order across histories).
pub struct World {
    pub histories: Vec<History>,
}

impl World {
    pub fn generate(seed: u64, histories: usize) -> World {
        let mut seq = 0u32;
        let mut grant_seq = 0u32;
        let histories = (0..histories).map(|h| history(h, seed, &mut seq, &mut grant_seq)).collect();
        World { histories }
    }

    /// The records of the whole store (one store holds every history; each history is its own
    /// owner's memory).
    pub fn records(&self, store: &str) -> Records {
        let mut r = Records {
            meta: Some(MetaRecord {
                id: store.into(),
                name: None,
                revision: 2,
                created_at_ms: 0,
                committed_at_ms: None,
                incarnation: None,
            }),
            vector_space: Some(earshot_store::dense::VectorSpace {
                dimension: EMBEDDING_DIMENSION as u32,
                metric: earshot_store::model::Metric::Cosine,
            }),
            ..Records::default()
        };
        for h in &self.histories {
            r.participants.extend(h.records.participants.iter().cloned());
            r.identities.extend(h.records.identities.iter().cloned());
            r.audiences.extend(h.records.audiences.iter().cloned());
            r.items.extend(h.records.items.iter().cloned());
            r.grants.extend(h.records.grants.iter().cloned());
            r.contents.extend(h.records.contents.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        r
    }
}
