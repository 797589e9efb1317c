//! Shared helpers for the benchmarks: a deterministic synthetic store, its bulk import into a
//! sled directory, and the probes (containers and items) every benchmark decides.
//!
//! The generator is seeded and uses its own xorshift, so every run of every bench binary sees
//! exactly the same records. Sizes come from [`Shape::with_items`]; the benches read the item
//! count from `EARSHOT_BENCH_ITEMS` (default 1,000,000) so a quick run can use fewer.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use earshot_core::{AudienceDigest, AudienceKind, State};
use earshot_store::durable::{
    encode_records, AudienceRecord, ContentRecord, GrantRecord, ItemRecord, MetaRecord, ParticipantRecord,
};
use earshot_store::model::{ContainerInput, ParticipantKind, ViewersInput};
use earshot_store::{Backend, Config, Earshot, ManualClock, Records, SledBackend, StoreHandle};

/// Id of the one store the synthetic records describe.
pub const STORE: &str = "bench";
/// Creation time of item 0; item `n` is created at `T0_MS + n`.
pub const T0_MS: i64 = 1_700_000_000_000;
/// The snapshot time every decision uses: one day after the last possible creation time.
pub const NOW_MS: i64 = T0_MS + 10_000_000 + 86_400_000;

/// Item count from `EARSHOT_BENCH_ITEMS`, else `default`.
pub fn items_from_env(default: usize) -> usize {
    std::env::var("EARSHOT_BENCH_ITEMS").ok().and_then(|v| v.replace('_', "").parse().ok()).unwrap_or(default)
}

/// xorshift64* — small, fast, deterministic; quality is ample for shaping synthetic data.
#[derive(Debug, Clone)]
pub struct XorShift(u64);

impl XorShift {
    pub fn new(seed: u64) -> Self {
        XorShift((seed ^ 0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `[0, n)`; `n` must be non-zero.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Skewed towards 0: `floor(n * u^power)`. Power 3 gives the top rank ~13% of 500 ranks.
    pub fn skewed(&mut self, n: usize, power: f64) -> usize {
        ((n as f64) * self.unit().powf(power)).min((n - 1) as f64) as usize
    }
}

/// Size and mix of a synthetic store.
#[derive(Debug, Clone)]
pub struct Shape {
    pub participants: usize,
    /// Participants `0..owners` own memories (one agent each); the rest are their contacts.
    pub owners: usize,
    /// Contacts per owner from which its shared audiences are drawn.
    pub circle: usize,
    /// Shared audiences (the owner-private ones, one per owner, come on top).
    pub audiences: usize,
    pub items: usize,
    pub grants: usize,
    /// Fractions of items recorded `public` and `owner_private` (the rest are shared).
    pub public_frac: f64,
    pub private_frac: f64,
    /// Fraction of items that are intersection derivations of two earlier items.
    pub derived_frac: f64,
    /// Fraction of shared audiences that are "teams" of 8–10 members (the rest have 2–6).
    pub team_frac: f64,
    /// Give every item a content record (as real items have); the index never holds it.
    pub content: bool,
    /// Dense recall: the share of items that carry an embedding, and its dimension (`None`:
    /// no item does). Embeddings are random unit vectors, one generator per item, so adding them
    /// changes nothing else of the store.
    pub embeddings: Option<(f64, usize)>,
    pub seed: u64,
}

impl Shape {
    /// The standard shape: 2,000 participants, 200 owners, one shared audience per 10 items.
    pub fn with_items(items: usize) -> Self {
        Shape {
            participants: 2_000,
            owners: 200,
            circle: 40,
            audiences: (items / 10).max(200),
            items,
            grants: items / 100,
            public_frac: 0.04,
            private_frac: 0.20,
            derived_frac: 0.01,
            team_frac: 0.01,
            content: true,
            embeddings: None,
            seed: 0x5eed_ea25_0001,
        }
    }
}

/// One item the benches decide: its id and its sequence number (= its interned `Iid`).
#[derive(Debug, Clone)]
pub struct ProbeItem {
    pub id: String,
    pub seq: u32,
}

/// Containers and items chosen from the generated data so each decision has a known answer.
#[derive(Debug, Clone)]
pub struct Probes {
    /// The acting owner of every probe container (participant 0).
    pub owner: String,
    /// Owner plus two members of the owner's busiest shared audience of 3+ members.
    pub viewers3: Vec<String>,
    /// Owner plus seven members of a team audience of the owner.
    pub viewers8: Vec<String>,
    /// Owner-private item of the owner without grants: admitted for {o}, denied for 3 viewers.
    pub private_item: ProbeItem,
    /// Shared item in the 3-viewer probe audience: admitted by origin.
    pub shared3_item: ProbeItem,
    /// Owner-private item with a grant to the probe audience (and one that does not admit).
    pub granted3_item: ProbeItem,
    /// Owner-private item with two grants, neither containing the 3 viewers: denied after
    /// looking at every grant.
    pub denied3_item: ProbeItem,
    /// Item in the team audience: admitted for the 8 viewers.
    pub team8_item: ProbeItem,
    /// Item of another owner whose audience does not contain the owner: denied.
    pub foreign_item: ProbeItem,
    /// Public item of the owner.
    pub public_item: ProbeItem,
}

impl Probes {
    /// A container for `viewers` (participant ids, the owner included) with fresh evidence.
    pub fn container(&self, viewers: &[String]) -> ContainerInput {
        ContainerInput {
            owner: self.owner.clone(),
            viewers: ViewersInput { participants: viewers.to_vec(), ..ViewersInput::default() },
        }
    }
}

/// Generated records plus what the benches need to know about them.
pub struct Synthetic {
    pub shape: Shape,
    pub records: Records,
    pub probes: Probes,
}

fn pname(i: usize) -> String {
    format!("p{i:05}")
}

fn digest_hex(members: &[u32]) -> (AudienceKind, String) {
    let names: Vec<String> = members.iter().map(|&m| pname(m as usize)).collect();
    let kind = AudienceKind::of_members(names.len());
    (kind, AudienceDigest::compute(kind, &names).to_hex())
}

fn public_hex() -> String {
    AudienceDigest::compute::<&str>(AudienceKind::Public, &[]).to_hex()
}

/// `None` stands for the public audience (everyone).
type MemberList = Option<Vec<u32>>;

struct Audiences {
    /// Sorted member pids (names are `pname(pid)`, zero-padded, so pid order is name order).
    lists: Vec<Vec<u32>>,
    hex: Vec<String>,
    by_members: HashMap<Vec<u32>, usize>,
}

impl Audiences {
    fn intern(&mut self, members: Vec<u32>) -> usize {
        if let Some(&a) = self.by_members.get(&members) {
            return a;
        }
        let a = self.lists.len();
        self.hex.push(digest_hex(&members).1);
        self.lists.push(members.clone());
        self.by_members.insert(members, a);
        a
    }
}

struct ItemGen {
    owner: usize,
    /// Index into `Audiences`, or `None` for public.
    aud: Option<usize>,
    sources: Vec<u32>,
    state: State,
}

/// Generates the synthetic store for `shape`. Deterministic in `shape.seed`.
pub fn generate(shape: &Shape) -> Synthetic {
    let mut rng = XorShift::new(shape.seed);
    let owners = shape.owners;
    let contacts = shape.participants - owners;
    assert!(contacts >= shape.circle && owners >= 2, "shape too small");

    // Participants: owners are people with an agent; a tenth of the contacts are devices.
    let participants: Vec<ParticipantRecord> = (0..shape.participants)
        .map(|i| ParticipantRecord {
            id: pname(i),
            kind: if i >= owners && i % 10 == 0 { ParticipantKind::Device } else { ParticipantKind::Person },
            name: Some(format!("Participant {i}")),
        })
        .collect();

    // Each owner's circle of contacts, then its audiences in rank order (rank 0 is {o}).
    let mut auds = Audiences { lists: Vec::new(), hex: Vec::new(), by_members: HashMap::new() };
    let mut owner_auds: Vec<Vec<usize>> = Vec::with_capacity(owners);
    let per_owner = shape.audiences.div_ceil(owners);
    for o in 0..owners {
        let mut circle: Vec<u32> = Vec::with_capacity(shape.circle);
        let mut seen = HashSet::new();
        while circle.len() < shape.circle {
            let c = (owners + rng.below(contacts)) as u32;
            if seen.insert(c) {
                circle.push(c);
            }
        }
        let mut list = vec![auds.intern(vec![o as u32])];
        let mut tries = 0;
        while list.len() <= per_owner && tries < per_owner * 50 {
            tries += 1;
            // Every owner has at least one team (at rank 5), so 8-viewer probes always exist.
            let size = if rng.unit() < shape.team_frac || list.len() == 5 {
                8 + rng.below(3)
            } else {
                // 2–6 members including the owner, smaller sets more common.
                [2, 2, 2, 3, 3, 3, 4, 4, 5, 6][rng.below(10)]
            };
            let mut members = vec![o as u32];
            while members.len() < size {
                let c = circle[rng.skewed(shape.circle, 1.5)];
                if !members.contains(&c) {
                    members.push(c);
                }
            }
            members.sort_unstable();
            if !auds.by_members.contains_key(&members) {
                list.push(auds.intern(members));
            }
        }
        owner_auds.push(list);
    }

    // Items, in creation order. Owners mildly skewed, audiences within an owner strongly.
    let mut items: Vec<ItemGen> = Vec::with_capacity(shape.items);
    let mut owned: Vec<Vec<u32>> = vec![Vec::new(); owners];
    for seq in 0..shape.items {
        let owner = rng.skewed(owners, 1.3);
        let list = &owner_auds[owner];
        let derive = seq >= 1_000 && owned[owner].len() >= 2 && rng.unit() < shape.derived_frac;
        if derive {
            let mine = &owned[owner];
            let a = mine[rng.below(mine.len())];
            let mut b = mine[rng.below(mine.len())];
            if a == b {
                b = mine[(rng.below(mine.len()) + 1) % mine.len()];
            }
            let members = |i: u32| -> MemberList { items[i as usize].aud.map(|x| auds.lists[x].clone()) };
            let aud = match (members(a), members(b)) {
                (None, None) => None,
                (Some(m), None) | (None, Some(m)) => Some(m),
                (Some(x), Some(y)) => Some(x.into_iter().filter(|p| y.contains(p)).collect::<Vec<u32>>()),
            };
            let aud = aud.map(|m| auds.intern(m));
            let mut sources = vec![a, b];
            sources.sort_unstable();
            sources.dedup();
            items.push(ItemGen { owner, aud, sources, state: State::Active });
        } else {
            let u = rng.unit();
            let aud = if u < shape.public_frac {
                None
            } else if u < shape.public_frac + shape.private_frac {
                Some(list[0])
            } else {
                Some(list[1 + rng.skewed(list.len() - 1, 3.0)])
            };
            let s = rng.unit();
            let state = if s < 0.01 {
                State::Deleted
            } else if s < 0.015 {
                State::Frozen
            } else {
                State::Active
            };
            items.push(ItemGen { owner, aud, sources: Vec::new(), state });
        }
        owned[owner].push(seq as u32);
    }

    // Grants: random items, audience another of the owner's audiences; some revoked/expiring.
    let mut grants: Vec<(u32, usize, bool, Option<i64>)> = Vec::with_capacity(shape.grants + 4);
    let mut granted: HashSet<u32> = HashSet::new();
    for _ in 0..shape.grants {
        let item = rng.below(shape.items) as u32;
        let it = &items[item as usize];
        if it.aud.is_none() {
            continue;
        }
        let list = &owner_auds[it.owner];
        let aud = list[1 + rng.below(list.len() - 1)];
        if Some(aud) == it.aud {
            continue;
        }
        let r = rng.unit();
        let revoked = r < 0.1;
        let expires = if r < 0.2 {
            Some(T0_MS - 1)
        } else if r < 0.4 {
            Some(NOW_MS + 365 * 86_400_000)
        } else {
            None
        };
        granted.insert(item);
        grants.push((item, aud, revoked, expires));
    }

    // Probes, all for owner 0.
    let o = 0usize;
    let active_plain =
        |i: &&ItemGen, seq: u32| i.state == State::Active && i.sources.is_empty() && !granted.contains(&seq);
    let find = |pred: &dyn Fn(u32, &ItemGen) -> bool| -> Vec<u32> {
        owned[o]
            .iter()
            .rev()
            .copied()
            .filter(|&s| {
                let it = &items[s as usize];
                active_plain(&it, s) && pred(s, it)
            })
            .collect()
    };
    let mut counts: HashMap<usize, usize> = HashMap::new();
    for &s in &owned[o] {
        if let Some(a) = items[s as usize].aud {
            *counts.entry(a).or_default() += 1;
        }
    }
    let busiest = |min: usize, max: usize| {
        owner_auds[o]
            .iter()
            .copied()
            .filter(|a| (min..=max).contains(&auds.lists[*a].len()))
            .max_by_key(|a| (counts.get(a).copied().unwrap_or(0), std::cmp::Reverse(*a)))
            .expect("owner 0 has an audience of that size")
    };
    let probe_aud = busiest(3, 6);
    let team_aud = busiest(8, 10);
    let v3: Vec<u32> = {
        let m = &auds.lists[probe_aud];
        let others: Vec<u32> = m.iter().copied().filter(|&p| p != o as u32).take(2).collect();
        let mut v = vec![o as u32];
        v.extend(others);
        v.sort_unstable();
        v
    };
    let v8: Vec<u32> = {
        let m = &auds.lists[team_aud];
        let mut v = vec![o as u32];
        v.extend(m.iter().copied().filter(|&p| p != o as u32).take(7));
        v.sort_unstable();
        v
    };
    let contains = |a: usize, v: &[u32]| v.iter().all(|p| auds.lists[a].contains(p));
    let privates = find(&|_, it| it.aud == Some(owner_auds[o][0]));
    assert!(privates.len() >= 3, "owner 0 has too few private items");
    let shared3 = find(&|_, it| it.aud == Some(probe_aud))[0];
    let team8 = find(&|_, it| it.aud == Some(team_aud))[0];
    let public = find(&|_, it| it.aud.is_none())[0];
    let foreign = owned[1]
        .iter()
        .rev()
        .copied()
        .find(|&s| {
            let it = &items[s as usize];
            it.state == State::Active && it.sources.is_empty() && it.aud.is_some_and(|a| auds.lists[a].len() >= 2)
        })
        .expect("owner 1 has a shared item");
    let not_v3: Vec<usize> = owner_auds[o][1..].iter().copied().filter(|&a| !contains(a, &v3)).take(2).collect();
    let (private, granted3, denied3) = (privates[0], privates[1], privates[2]);
    grants.push((granted3, not_v3[0], false, None));
    grants.push((granted3, probe_aud, false, Some(NOW_MS + 86_400_000)));
    grants.push((denied3, not_v3[0], false, None));
    grants.push((denied3, not_v3[1], false, None));

    // Records.
    let public_digest = public_hex();
    let item_id = |seq: u32| format!("i{seq:07}");
    let mut item_records = Vec::with_capacity(items.len());
    let mut contents = BTreeMap::new();
    let embedding = |seq: usize| {
        let (share, dimension) = shape.embeddings?;
        let mut r = XorShift::new(shape.seed ^ (seq as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
        (r.unit() < share).then(|| random_unit_vector(&mut r, dimension))
    };
    for (seq, it) in items.iter().enumerate() {
        let id = item_id(seq as u32);
        if shape.content {
            contents.insert(
                id.clone(),
                ContentRecord {
                    content: Some(format!(
                        "Note {seq} of {}: met about topic {} and agreed next steps.",
                        pname(it.owner),
                        seq % 977
                    )),
                    attributes: None,
                    embedding: embedding(seq),
                },
            );
        }
        item_records.push(ItemRecord {
            subjects: Vec::new(),
            id,
            seq: seq as u32,
            owner: pname(it.owner),
            audience: it.aud.map_or_else(|| public_digest.clone(), |a| auds.hex[a].clone()),
            sources: it.sources.iter().map(|&s| item_id(s)).collect(),
            state: it.state,
            superseded_by: None,
            created_rev: seq as u64 + 2,
            created_at_ms: T0_MS + seq as i64,
            author: None,
            author_unknown: false,
            author_removed: false,
        });
    }
    let rev0 = items.len() as u64 + 2;
    let grant_records: Vec<GrantRecord> = grants
        .iter()
        .enumerate()
        .map(|(n, &(item, aud, revoked, expires_at_ms))| GrantRecord {
            consent: None,
            id: format!("g{n:06}"),
            seq: n as u32,
            item: item_id(item),
            audience: auds.hex[aud].clone(),
            issuer: "admin".into(),
            reason: Some("bench".into()),
            created_at_ms: T0_MS + items.len() as i64 + n as i64,
            created_rev: rev0 + n as u64,
            expires_at_ms,
            revoked,
        })
        .collect();
    let audience_records: Vec<AudienceRecord> = auds
        .lists
        .iter()
        .zip(&auds.hex)
        .map(|(m, hex)| AudienceRecord {
            digest: hex.clone(),
            kind: AudienceKind::of_members(m.len()),
            members: m.iter().map(|&p| pname(p as usize)).collect(),
        })
        .collect();
    let meta = MetaRecord {
        id: STORE.into(),
        name: Some("synthetic".into()),
        revision: rev0 + grant_records.len() as u64,
        created_at_ms: T0_MS,
        committed_at_ms: None,
        incarnation: None,
    };
    let probe = |seq: u32| ProbeItem { id: item_id(seq), seq };
    let names = |v: &[u32]| v.iter().map(|&p| pname(p as usize)).collect::<Vec<_>>();
    Synthetic {
        shape: shape.clone(),
        records: Records {
            meta: Some(meta),
            participants,
            identities: Vec::new(),
            audiences: audience_records,
            items: item_records,
            contents,
            grants: grant_records,
            vector_space: shape.embeddings.map(|(_, d)| earshot_store::dense::VectorSpace {
                dimension: d as u32,
                metric: earshot_store::model::Metric::Cosine,
            }),
            ..Records::default()
        },
        probes: Probes {
            owner: pname(o),
            viewers3: names(&v3),
            viewers8: names(&v8),
            private_item: probe(private),
            shared3_item: probe(shared3),
            granted3_item: probe(granted3),
            denied3_item: probe(denied3),
            team8_item: probe(team8),
            foreign_item: probe(foreign),
            public_item: probe(public),
        },
    }
}

/// A random vector of unit length (components uniform in [-1, 1), then normalised), as an
/// embedding written under `cosine` is stored.
pub fn random_unit_vector(r: &mut XorShift, dimension: usize) -> Vec<f32> {
    let v: Vec<f64> = (0..dimension).map(|_| r.unit() * 2.0 - 1.0).collect();
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt().max(f64::MIN_POSITIVE);
    v.iter().map(|x| (x / norm) as f32).collect()
}

/// Items committed per durable batch during the bulk import.
pub const IMPORT_CHUNK: usize = 50_000;

/// Writes `records` into `backend` with `encode_records`, in chunks of [`IMPORT_CHUNK`] items.
pub fn import(backend: &dyn Backend, records: &Records) -> earshot_store::Result<()> {
    let head = Records {
        meta: records.meta.clone(),
        participants: records.participants.clone(),
        identities: records.identities.clone(),
        audiences: records.audiences.clone(),
        vector_space: records.vector_space,
        ..Records::default()
    };
    backend.commit(STORE, encode_records(&head)?)?;
    for chunk in records.items.chunks(IMPORT_CHUNK) {
        let part = Records {
            contents: chunk
                .iter()
                .filter_map(|i| records.contents.get(&i.id).map(|c| (i.id.clone(), c.clone())))
                .collect(),
            items: chunk.to_vec(),
            ..Records::default()
        };
        backend.commit(STORE, encode_records(&part)?)?;
    }
    for chunk in records.grants.chunks(IMPORT_CHUNK) {
        backend.commit(STORE, encode_records(&Records { grants: chunk.to_vec(), ..Records::default() })?)?;
    }
    Ok(())
}

/// The store's in-memory backend, under the name the benches use.
pub use earshot_store::MemoryBackend as MemBackend;

/// A synthetic store imported into a sled directory (removed on drop).
pub struct BuiltDir {
    pub dir: tempfile::TempDir,
    pub generate_time: Duration,
    pub import_time: Duration,
}

/// Generates the store for `shape` and imports it into a fresh sled directory. The directory
/// is created under `EARSHOT_BENCH_DIR` if set, else under the system temporary directory.
pub fn build_dir(shape: &Shape) -> (Synthetic, BuiltDir) {
    let t = Instant::now();
    let syn = generate(shape);
    let generate_time = t.elapsed();
    let dir = match std::env::var_os("EARSHOT_BENCH_DIR") {
        Some(base) => tempfile::Builder::new().prefix("earshot-bench-").tempdir_in(base),
        None => tempfile::Builder::new().prefix("earshot-bench-").tempdir(),
    }
    .expect("temporary directory");
    let t = Instant::now();
    {
        let backend = SledBackend::open(dir.path()).expect("sled opens");
        import(&backend, &syn.records).expect("bulk import");
    }
    let import_time = t.elapsed();
    (syn, BuiltDir { dir, generate_time, import_time })
}

/// Opens an Earshot over the sled directory at `path`, with the clock fixed at [`NOW_MS`].
pub fn open_dir(path: &Path) -> earshot_store::Result<Earshot> {
    Earshot::open_with(Arc::new(SledBackend::open(path)?), Arc::new(ManualClock::new(NOW_MS)), Config::default())
}

/// A built, opened store, shared by every bench of one process.
pub struct Fixture {
    pub syn: Synthetic,
    pub built: BuiltDir,
    pub earshot: Earshot,
    pub store: Arc<StoreHandle>,
    pub open_time: Duration,
}

static FIXTURES: Mutex<BTreeMap<usize, &'static Fixture>> = Mutex::new(BTreeMap::new());

/// The fixture for `items` items, built on first use and cached for the life of the process.
pub fn fixture(items: usize) -> &'static Fixture {
    let mut cache = FIXTURES.lock().unwrap_or_else(|p| p.into_inner());
    cache.entry(items).or_insert_with(|| {
        let (syn, built) = build_dir(&Shape::with_items(items));
        let t = Instant::now();
        let earshot = open_dir(built.dir.path()).expect("the synthetic store opens");
        let open_time = t.elapsed();
        let store = earshot.store(STORE).expect("the synthetic store is running");
        eprintln!(
            "fixture: {items} items, {} audiences, {} grants; generated in {:.1?}, imported in {:.1?}, opened in {:.1?}",
            syn.records.audiences.len(),
            syn.records.grants.len(),
            built.generate_time,
            built.import_time,
            open_time
        );
        Box::leak(Box::new(Fixture { syn, built, earshot, store, open_time }))
    })
}

/// Stops every cached fixture's writers and removes its directory (fixtures live for the whole
/// process, so their temporary directories are not removed on drop).
pub fn remove_fixture_dirs() {
    let cache = FIXTURES.lock().unwrap_or_else(|p| p.into_inner());
    for f in cache.values() {
        f.earshot.shutdown();
        let _ = std::fs::remove_dir_all(f.built.dir.path());
    }
}

/// Median of a list of durations (the lower middle for an even count).
pub fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or_default()
}

/// The `q` quantile (0..=1) of sorted latencies, nearest rank.
pub fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
