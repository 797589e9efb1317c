//! Export and import of a whole store as NDJSON (issue 11): the file format, the streaming
//! export of a store's durable records, and the validated, fail-closed import into a new store.
//!
//! # Format
//!
//! The first line is a header, `{"earshot_export": 1, "store", "revision", "name"?,
//! "created_at_ms", "committed_at_ms"?}` (the store's revision record); then one line per
//! durable record in key order, `{"kind": "item", "key": "f1", "value": <the record's JSON>}`,
//! the value byte for byte as the backend holds it; the last line is
//! `{"earshot_export_end": {"records": n, "revision": r}}`. An export without its end line
//! (cut off, or failed half way: such a stream ends with an `{"error": …}` line instead) is
//! refused by the import.
//!
//! Kinds (key prefix → kind): `p/` participant, `x/` identity (key `transport\0identifier`),
//! `a/` audience, `i/` item, `c/` content, `g/` grant, `s` schema (key `""`), `d/` device,
//! `r/` relation, `k/` capability, `u/` use, `q/` idempotency_key, `h/` item_digest, `w/` trust
//! (a trust delegation, SPEC §6.2). Every exported key
//! is an identifier, so keys are JSON strings; no binary key is exported.
//!
//! Left out, on purpose: the revision log (`l/`) and sealed contexts (`t/`). The log is how
//! followers replay and watchers resume *this* store's revisions; an imported store starts a
//! fresh log at the exported revision (a watch after an older token answers
//! `revision_expired`, as after pruning). Sealed contexts belong to attempts, which are
//! per-process and never survive a restart either; they are audit records of the source store.
//!
//! # Consistency of an export
//!
//! An export reads one revision: the one its header names, the revision the store was at when
//! it opened. A running store's export reads its records through a pin (`kernel::pin`): the
//! writer saves, before each commit, the value every exported key had at the pinned revision,
//! so writes go on during the export and never show in it. The pin lasts as long as the
//! export and costs memory only for the records written meanwhile (bounded: past
//! `kernel::pin::MAX_SAVED_BYTES` the export fails with `write_conflict`, safe to retry). A
//! shared datastore's other replicas commit without passing through this process's writer, so
//! there the export reads the datastore's own snapshot instead (`Backend::snapshot`:
//! PostgreSQL's `REPEATABLE READ`), which no replica's commit changes. Either way the export
//! reads the revision record again after the last chunk and fails with `write_conflict` if it
//! moved, rather than produce a file mixing two revisions (a backstop: neither way lets it
//! move). An offline export (`earshot export --data`, no writer running) reads the records as
//! they are, or the datastore's snapshot where there is one.
//!
//! # Import: validated first, invisible until complete
//!
//! Every line is parsed and decoded as its record type as it arrives; records are committed in
//! chunks under the new store's id *without* its revision record, so the store does not exist
//! for anyone (start-up skips a tree without one; PostgreSQL lists stores by their head) until
//! the last commit. After the end line the whole set is checked the way a start-up checks it
//! (`rebuild`: digests, references, delegation, schema), plus: keys strictly increasing, each
//! record at its canonical key, each content record naming an item, no revision after the
//! header's. Only then the revision record (and the fresh log's first record) is committed,
//! atomically: the store appears whole or not at all. On any failure the chunks already written
//! are deleted; should the process die first, the next import of that id clears them.
//! The records of the projection are held in memory during the import (as at every start-up);
//! content records, the bulk of a store, are only streamed through.

use std::io::{BufRead, Write};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::compose::{rebuild, Records};
use crate::error::{Result, StoreError};
use crate::kernel::backend::{dec, enc, key, meta_op, Backend, MetaRecord, Op, META_KEY};
use crate::kernel::log::{log_key, LogEntry};
use crate::kernel::pin::PinnedRecords;
use crate::memory::durable::ContentRecord;
use crate::memory::snapshot::MemorySnapshot;

/// The format version this code writes and reads.
pub const FORMAT: u64 = 1;
/// Records read from the backend per scan.
const SCAN_CHUNK: usize = 1024;
/// Records per commit during an import.
pub const IMPORT_CHUNK: usize = 10_000;
/// Longest line an import accepts: far above the largest record the store writes (content is
/// at most 64 KiB, attributes 64 × 1 KiB, grants 1,024 members), so that a line without an end
/// cannot make the import hold unbounded input.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Record kinds by key prefix. The schema record's key is the single byte `s`.
const KINDS: [(u8, &str); 15] = [
    (b'a', "audience"),
    (b'c', "content"),
    (b'd', "device"),
    (b'g', "grant"),
    (b'h', "item_digest"),
    (b'i', "item"),
    (b'k', "capability"),
    (b'p', "participant"),
    (b'q', "idempotency_key"),
    (b'r', "relation"),
    (b's', "schema"),
    (b'u', "use"),
    (b'v', "vector_space"),
    (b'w', "trust"),
    (b'x', "identity"),
];

/// Key ranges an export reads: everything but the log (`l/…`), sealed contexts (`t/…`) and
/// open attempts (`y/…`). (`0` is the byte after `/`.)
fn segments() -> Vec<(Vec<u8>, Vec<u8>)> {
    vec![
        (Vec::new(), b"l/".to_vec()),
        (b"l0".to_vec(), b"t/".to_vec()),
        (b"t0".to_vec(), b"y/".to_vec()),
        (b"y0".to_vec(), vec![0xff]),
    ]
}

/// Whether an export reads the record at `key` (the keys [`segments`] cover): what a pin of a
/// running store saves pre-images of.
pub(crate) fn exported_key(key: &[u8]) -> bool {
    !(key.starts_with(b"l/") || key.starts_with(b"t/") || key.starts_with(b"y/"))
}

/// The first line of an export: the store's revision record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub earshot_export: u64,
    pub store: String,
    pub revision: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub created_at_ms: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committed_at_ms: Option<i64>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct End {
    earshot_export_end: EndBody,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EndBody {
    records: u64,
    revision: u64,
}

/// One record line as read (the value borrowed raw, so it is stored byte for byte).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line<'a> {
    #[serde(borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    key: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    value: &'a serde_json::value::RawValue,
}

/// The kind of a raw key and the id part of it, if it is an exported record.
fn kind_of(k: &[u8]) -> Option<(&'static str, &[u8])> {
    match k {
        b"s" => Some(("schema", &[])),
        [p, b'/', rest @ ..] => KINDS.iter().find(|(q, _)| q == p && *q != b's').map(|(_, n)| (*n, rest)),
        _ => None,
    }
}

/// The raw key of a record line.
fn raw_key(kind: &str, id: &str) -> Option<Vec<u8>> {
    let (prefix, _) = KINDS.iter().find(|(_, n)| *n == kind)?;
    if *prefix == b's' {
        return id.is_empty().then(|| b"s".to_vec());
    }
    Some(key(*prefix, id))
}

/// A streaming export of one store: [`Export::next_chunk`] appends the next lines, from the
/// header to the end line, reading the backend one chunk at a time.
pub struct Export {
    records_at: PinnedRecords,
    store: String,
    header: Header,
    header_sent: bool,
    /// Ranges still to read, the current one last; `from` is where it continues.
    segments: Vec<(Vec<u8>, Vec<u8>)>,
    from: Vec<u8>,
    records: u64,
    done: bool,
}

impl Export {
    /// Starts an offline export of `store` at its current revision (`StoreNotFound` without
    /// one): on a datastore with snapshots of its own (PostgreSQL), of the snapshot; elsewhere
    /// no writer may run on it meanwhile (a running store is exported with [`Export::pinned`],
    /// which `Earshot::export` does).
    pub fn open(backend: Arc<dyn Backend>, store: &str) -> Result<Self> {
        match backend.snapshot(store)? {
            Some(view) => Self::pinned(PinnedRecords::viewed(backend, store, view)),
            None => Self::pinned(PinnedRecords::unpinned(backend, store)),
        }
    }

    /// Starts an export of the records a pin holds, at the revision they are at.
    pub fn pinned(records_at: PinnedRecords) -> Result<Self> {
        let store = records_at.store().to_string();
        let store = store.as_str();
        let meta: MetaRecord = match records_at.get(META_KEY)? {
            Some(v) => dec(META_KEY, &v)?,
            None => return Err(StoreError::StoreNotFound(store.chars().take(128).collect())),
        };
        let header = Header {
            earshot_export: FORMAT,
            store: store.to_string(),
            revision: meta.revision,
            name: meta.name,
            created_at_ms: meta.created_at_ms,
            committed_at_ms: meta.committed_at_ms,
        };
        let mut segments = segments();
        segments.reverse();
        let from = segments.last().map(|(f, _)| f.clone()).unwrap_or_default();
        Ok(Export {
            records_at,
            store: store.to_string(),
            header,
            header_sent: false,
            segments,
            from,
            records: 0,
            done: false,
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    fn changed(&self, now: u64) -> StoreError {
        StoreError::WriteConflict(format!(
            "store `{}` moved from revision {} to {now} during the export, which would mix two revisions; retry the export",
            self.store, self.header.revision
        ))
    }

    /// Appends the next lines to `out` (the header, then up to one scan of records, then the
    /// end line); `false` once everything has been written.
    pub fn next_chunk(&mut self, out: &mut Vec<u8>) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        if !self.header_sent {
            self.header_sent = true;
            serde_json::to_writer(&mut *out, &self.header).map_err(|e| StoreError::Storage(format!("encode: {e}")))?;
            out.push(b'\n');
            return Ok(true);
        }
        let Some((_, to)) = self.segments.last().cloned() else {
            // Every range read: the revision must not have moved meanwhile.
            let now: MetaRecord = match self.records_at.get(META_KEY)? {
                Some(v) => dec(META_KEY, &v)?,
                None => return Err(StoreError::StoreNotFound(self.store.clone())),
            };
            if now.revision != self.header.revision {
                return Err(self.changed(now.revision));
            }
            let end = End { earshot_export_end: EndBody { records: self.records, revision: self.header.revision } };
            serde_json::to_writer(&mut *out, &end).map_err(|e| StoreError::Storage(format!("encode: {e}")))?;
            out.push(b'\n');
            self.done = true;
            return Ok(true);
        };
        let (rows, next) = self.records_at.scan(&self.from, &to, SCAN_CHUNK)?;
        match next {
            Some(next) => self.from = next,
            None => {
                self.segments.pop();
                self.from = self.segments.last().map(|(f, _)| f.clone()).unwrap_or_default();
            }
        }
        for (k, v) in &rows {
            if k.as_slice() == META_KEY {
                let m: MetaRecord = dec(k, v)?;
                if m.revision != self.header.revision {
                    return Err(self.changed(m.revision));
                }
                continue;
            }
            write_record(out, k, v)?;
            self.records += 1;
        }
        Ok(true)
    }

    /// Writes the whole export to `w`; answers the number of records.
    pub fn write_to(mut self, w: &mut dyn Write) -> Result<u64> {
        let mut buf = Vec::with_capacity(256 * 1024);
        while self.next_chunk(&mut buf)? {
            w.write_all(&buf).map_err(|e| StoreError::Storage(format!("writing the export: {e}")))?;
            buf.clear();
        }
        w.flush().map_err(|e| StoreError::Storage(format!("writing the export: {e}")))?;
        Ok(self.records)
    }
}

/// One record line, the value verbatim (checked to be one line of JSON).
fn write_record(out: &mut Vec<u8>, k: &[u8], v: &[u8]) -> Result<()> {
    let lossy = || String::from_utf8_lossy(k).into_owned();
    let (kind, id) =
        kind_of(k).ok_or_else(|| StoreError::Integrity(format!("record `{}` is of no known kind", lossy())))?;
    let id = std::str::from_utf8(id)
        .map_err(|_| StoreError::Integrity(format!("record `{}` has a key that is not UTF-8", lossy())))?;
    let raw: &serde_json::value::RawValue = serde_json::from_slice(v)
        .map_err(|e| StoreError::Integrity(format!("record `{}` is unreadable: {e}", lossy())))?;
    out.extend_from_slice(b"{\"kind\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"key\":");
    serde_json::to_writer(&mut *out, id).map_err(|e| StoreError::Storage(format!("encode: {e}")))?;
    out.extend_from_slice(b",\"value\":");
    let text = raw.get();
    if text.contains(['\n', '\r']) {
        // Never the case for records the store wrote (compact JSON); kept one line regardless.
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| StoreError::Integrity(format!("record `{}` is unreadable: {e}", lossy())))?;
        serde_json::to_writer(&mut *out, &value).map_err(|e| StoreError::Storage(format!("encode: {e}")))?;
    } else {
        out.extend_from_slice(text.as_bytes());
    }
    out.extend_from_slice(b"}\n");
    Ok(())
}

/// What an import created.
#[derive(Debug, Clone, Serialize)]
pub struct Imported {
    /// The new store.
    pub store: String,
    /// The store the export was taken from.
    pub from: String,
    pub revision: u64,
    pub records: u64,
    /// The new store's incarnation (an import is a new life of its id).
    pub incarnation: String,
}

fn invalid(line: u64, message: impl Into<String>) -> StoreError {
    StoreError::ImportInvalid { line, message: message.into() }
}

/// Reads one line of at most [`MAX_LINE_BYTES`] into `buf` (without its newline); `false` at
/// the end of the input.
fn read_line(input: &mut dyn BufRead, buf: &mut Vec<u8>, line: u64) -> Result<bool> {
    buf.clear();
    loop {
        let available = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(invalid(line, format!("reading the input: {e}"))),
        };
        if available.is_empty() {
            return Ok(!buf.is_empty());
        }
        let (take, found) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        if buf.len() + take > MAX_LINE_BYTES + 1 {
            return Err(invalid(line, format!("line longer than {MAX_LINE_BYTES} bytes")));
        }
        buf.extend_from_slice(&available[..take]);
        input.consume(take);
        if found {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(true);
        }
    }
}

/// Deletes every record of `store` (the leftovers of an import that did not finish), in chunks.
fn clear(backend: &dyn Backend, store: &str) -> Result<()> {
    loop {
        let rows = backend.scan(store, &[], &[0xff], IMPORT_CHUNK)?;
        if rows.is_empty() {
            return Ok(());
        }
        backend.commit(store, rows.into_iter().map(|(k, _)| Op::Del(k)).collect())?;
    }
}

/// Imports an export from `input` as the new store `store` of `backend`, validated as
/// described in the module documentation, and answers what it created with the decoded
/// records (to start the store from). `now_ms` dates the first record of the new log.
/// Refused with `StoreExists` when `store` has a revision record, `ImportInvalid` for any
/// problem with the input; nothing of a refused import remains.
pub fn import(backend: &dyn Backend, store: &str, input: &mut dyn BufRead, now_ms: i64) -> Result<(Imported, Records)> {
    crate::error::check_id("store", store)?;
    if backend.get(store, META_KEY)?.is_some() {
        return Err(StoreError::StoreExists(store.to_string()));
    }
    // Records without a revision record are what an import that never finished left.
    clear(backend, store)?;
    let mut written: Vec<Vec<u8>> = Vec::new();
    let result = import_records(backend, store, input, now_ms, &mut written);
    if result.is_err() && !written.is_empty() {
        for chunk in written.chunks(IMPORT_CHUNK) {
            if let Err(e) = backend.commit(store, chunk.iter().map(|k| Op::Del(k.clone())).collect()) {
                tracing::warn!(store, error = %e, "could not remove the records of a refused import; the next import of this id removes them");
                break;
            }
        }
    }
    result
}

fn import_records(
    backend: &dyn Backend,
    store: &str,
    input: &mut dyn BufRead,
    now_ms: i64,
    keys: &mut Vec<Vec<u8>>,
) -> Result<(Imported, Records)> {
    let mut buf = Vec::new();
    let mut line_no: u64 = 1;
    if !read_line(input, &mut buf, line_no)? {
        return Err(invalid(1, "the input is empty: expected the export header"));
    }
    let header: Header = serde_json::from_slice(&buf)
        .map_err(|e| invalid(1, format!("expected the export header `{{\"earshot_export\": {FORMAT}, …}}`: {e}")))?;
    if header.earshot_export != FORMAT {
        return Err(invalid(1, format!("export format {} is not supported (this is {FORMAT})", header.earshot_export)));
    }
    if header.revision == 0 {
        return Err(invalid(1, "revision 0: a store's creation is its revision 1"));
    }
    // An imported store is a new life of its id (even when it restores the same id): its
    // tokens are not those of the store the export was taken from, nor of any earlier store
    // of this id.
    let incarnation = crate::kernel::backend::new_incarnation();
    let mut records = Records::default();
    let mut contents: Vec<(u64, String)> = Vec::new();
    let mut pending: Vec<Op> = Vec::with_capacity(IMPORT_CHUNK);
    let mut count: u64 = 0;
    let mut end: Option<EndBody> = None;
    loop {
        line_no += 1;
        if !read_line(input, &mut buf, line_no)? {
            break;
        }
        if end.is_some() {
            return Err(invalid(line_no, "a line after the end line"));
        }
        if buf.starts_with(b"{\"earshot_export_end\"") {
            let e: End = serde_json::from_slice(&buf).map_err(|e| invalid(line_no, format!("bad end line: {e}")))?;
            end = Some(e.earshot_export_end);
            continue;
        }
        let line: Line<'_> = serde_json::from_slice(&buf).map_err(|e| {
            if buf.starts_with(b"{\"error\"") {
                invalid(line_no, format!("the export failed where it was taken: {}", String::from_utf8_lossy(&buf)))
            } else {
                invalid(line_no, format!("expected a record line {{\"kind\", \"key\", \"value\"}}: {e}"))
            }
        })?;
        let k = raw_key(&line.kind, &line.key)
            .ok_or_else(|| invalid(line_no, format!("unknown record kind `{}` (or a schema with a key)", line.kind)))?;
        if keys.last().is_some_and(|prev| *prev >= k) {
            return Err(invalid(
                line_no,
                format!("record {} `{}` is out of key order or repeated", line.kind, line.key),
            ));
        }
        let mut value = line.value.get().as_bytes().to_vec();
        let decoded = if k[0] == b'c' {
            // Content is streamed through: checked as a record, named item checked at the end.
            serde_json::from_slice::<ContentRecord>(&value).map(|_| ()).map_err(|e| e.to_string())
        } else {
            match records.decode_one(&k, &value) {
                Ok(()) => Ok(()),
                Err(StoreError::Integrity(m)) => Err(m),
                Err(e) => Err(e.to_string()),
            }
        };
        decoded.map_err(|m| invalid(line_no, format!("{} `{}`: {m}", line.kind, line.key)))?;
        if k[0] == b'c' {
            contents.push((line_no, line.key.into_owned()));
        } else if k[0] == b'q' {
            // A recorded answer carries a consistency token, which names its store and its
            // incarnation: the new store answers a retry with its own token for the same
            // revision.
            if let Some(rec) = records.idempotency.keys.last_mut() {
                rec.outcome.token = crate::kernel::token::encode(store, Some(&incarnation), rec.outcome.revision);
                value = enc(rec)?;
            }
        }
        count += 1;
        keys.push(k.clone());
        pending.push(Op::Put(k, value));
        if pending.len() >= IMPORT_CHUNK {
            // No revision record yet: these records are invisible until the final commit.
            backend.commit(store, std::mem::take(&mut pending))?;
        }
    }
    let end =
        end.ok_or_else(|| invalid(line_no, "the input ends before the end line: the export was cut off or failed"))?;
    if end.records != count || end.revision != header.revision {
        return Err(invalid(
            line_no,
            format!(
                "the end line says {} records at revision {}, the input holds {count} at revision {}",
                end.records, end.revision, header.revision
            ),
        ));
    }
    records.finish_decode();
    let meta = MetaRecord {
        id: store.to_string(),
        name: header.name.clone(),
        revision: header.revision,
        created_at_ms: header.created_at_ms,
        committed_at_ms: header.committed_at_ms,
        incarnation: Some(incarnation.clone()),
    };
    records.meta = Some(meta.clone());
    check_whole(&records, keys, &contents, header.revision)?;
    // The start-up's own checks: digests, references, provenance, schema and delegation. A
    // record the refusal names is reported at its line.
    rebuild(store, &records).map_err(|e| match e {
        StoreError::Integrity(m) => invalid(named_line(keys, &m), m),
        other => invalid(0, other.to_string()),
    })?;
    if !pending.is_empty() {
        backend.commit(store, std::mem::take(&mut pending))?;
    }
    // The store appears with this commit: its revision record and the first record of its new
    // log. Revision 1's record first, then the exported one: on a shared datastore a new store
    // is a head moving from nothing, through its creation (1), to this revision.
    let entry = LogEntry {
        revision: header.revision,
        committed_at_ms: now_ms,
        command: serde_json::Value::Null,
        ids: Vec::new(),
        digest: crate::kernel::log::digest(&[]),
        change: serde_json::json!({
            "kind": "store_imported", "store": store, "from": header.store, "outcome": "created"
        }),
    };
    let mut last = vec![Op::Put(log_key(header.revision), entry.encode()?)];
    if header.revision > 1 {
        last.push(meta_op(&MetaRecord { revision: 1, ..meta.clone() })?);
    }
    last.push(meta_op(&meta)?);
    backend.commit(store, last)?;
    let imported = Imported {
        store: store.to_string(),
        from: header.store,
        revision: header.revision,
        records: count,
        incarnation,
    };
    Ok((imported, records))
}

/// The line of the record at raw key `k`: records are on lines 2, 3, … in strictly increasing
/// key order (checked as they are read), so `keys` is sorted. 0 when the input holds none.
fn line_of(keys: &[Vec<u8>], k: &[u8]) -> u64 {
    keys.binary_search_by(|x| x.as_slice().cmp(k)).map_or(0, |i| i as u64 + 2)
}

/// How the rebuild's integrity messages name the record at fault (`item `x` names unknown
/// source …`, `audience <digest> does not match …`), by record kind.
const NAMED: [(&str, u8); 13] = [
    ("participant `", b'p'),
    ("audience ", b'a'),
    ("item `", b'i'),
    ("grant `", b'g'),
    ("device `", b'd'),
    ("relation grant `", b'r'),
    ("capability `", b'k'),
    ("use `", b'u'),
    ("idempotency key `", b'q'),
    ("idempotency record `", b'q'),
    ("trust delegation `", b'w'),
    ("request digest of item `", b'h'),
    ("request digest of unknown item `", b'h'),
];

/// The line of the record an integrity message of the rebuild names at its start (see
/// [`NAMED`]; `live ` and `root ` qualifiers aside), or 0 when it names none the input holds
/// (a fault of the records as a whole, such as a gap in a sequence).
fn named_line(keys: &[Vec<u8>], message: &str) -> u64 {
    let m = message.strip_prefix("live ").or_else(|| message.strip_prefix("root ")).unwrap_or(message);
    for (prefix, kind) in NAMED {
        let Some(rest) = m.strip_prefix(prefix) else { continue };
        let id = match prefix.strip_suffix('`') {
            Some(_) => rest.split('`').next(),
            None => rest.split(' ').next(),
        };
        if let Some(id) = id.filter(|id| !id.is_empty()) {
            return line_of(keys, &key(kind, id));
        }
    }
    0
}

/// Checks of the whole set that a start-up does not make, because the store's own writes
/// cannot break them: every record at the key its content names, content only for items, and
/// nothing created after the store's revision.
fn check_whole(records: &Records, keys: &[Vec<u8>], contents: &[(u64, String)], revision: u64) -> Result<()> {
    let mut canonical: Vec<Vec<u8>> = Vec::with_capacity(keys.len());
    canonical.extend(records.participants.iter().map(|r| key(b'p', &r.id)));
    canonical
        .extend(records.identities.iter().map(|r| key(b'x', &MemorySnapshot::ident_key(&r.transport, &r.identifier))));
    canonical.extend(records.audiences.iter().map(|r| key(b'a', &r.digest)));
    canonical.extend(records.items.iter().map(|r| key(b'i', &r.id)));
    canonical.extend(records.grants.iter().map(|r| key(b'g', &r.id)));
    canonical.extend(records.trust.iter().map(|r| key(b'w', &r.id)));
    if records.devices.schema.is_some() {
        canonical.push(b"s".to_vec());
    }
    canonical.extend(records.devices.devices.iter().map(|r| key(b'd', &r.id)));
    canonical.extend(records.devices.edges.iter().map(|r| key(b'r', &r.id)));
    canonical.extend(records.devices.capabilities.iter().map(|r| key(b'k', &r.id)));
    canonical.extend(records.devices.uses.iter().map(|r| key(b'u', &r.id)));
    canonical.extend(records.idempotency.keys.iter().map(|r| key(b'q', &r.key)));
    canonical.extend(records.idempotency.items.iter().map(|r| key(b'h', &r.item)));
    canonical.sort();
    let mut given: Vec<&Vec<u8>> = keys.iter().filter(|k| k.first() != Some(&b'c')).collect();
    given.sort();
    if canonical.len() != given.len() || canonical.iter().zip(&given).any(|(a, b)| a != *b) {
        let stray = given.iter().find(|k| canonical.binary_search(k).is_err());
        let line = stray.map_or(0, |k| line_of(keys, k));
        let stray = stray.map(|k| String::from_utf8_lossy(k).into_owned()).unwrap_or_default();
        return Err(invalid(line, format!("record key `{stray}` is not the key its record names")));
    }
    let items: std::collections::HashSet<&str> = records.items.iter().map(|i| i.id.as_str()).collect();
    if let Some((line, id)) = contents.iter().find(|(_, id)| !items.contains(id.as_str())) {
        return Err(invalid(*line, format!("content `{id}` names no item")));
    }
    let after = |kind: u8, what: &str, id: &str, rev: u64| {
        invalid(
            line_of(keys, &key(kind, id)),
            format!("{what} `{id}` was created at revision {rev}, after the export's revision {revision}"),
        )
    };
    if let Some(i) = records.items.iter().find(|i| i.created_rev > revision) {
        return Err(after(b'i', "item", &i.id, i.created_rev));
    }
    if let Some(g) = records.grants.iter().find(|g| g.created_rev > revision) {
        return Err(after(b'g', "grant", &g.id, g.created_rev));
    }
    if let Some(t) = records.trust.iter().find(|t| t.created_rev > revision || t.revoked_rev > Some(revision)) {
        return Err(after(b'w', "trust delegation", &t.id, t.created_rev.max(t.revoked_rev.unwrap_or(0))));
    }
    if let Some(e) = records.devices.edges.iter().find(|e| e.created_rev > revision) {
        return Err(after(b'r', "relation", &e.id, e.created_rev));
    }
    if let Some(c) = records.devices.capabilities.iter().find(|c| c.created_rev > revision) {
        return Err(after(b'k', "capability", &c.id, c.created_rev));
    }
    if let Some(u) = records.devices.uses.iter().find(|u| u.created_rev > revision) {
        return Err(after(b'u', "use", &u.id, u.created_rev));
    }
    if let Some(q) = records.idempotency.keys.iter().find(|q| q.outcome.revision > revision) {
        return Err(after(b'q', "idempotency key", &q.key, q.outcome.revision));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rebuild's messages name the record at fault at their start: each is found at its
    /// line; a message naming no record of the input, or none at all, is line 0.
    #[test]
    fn a_message_naming_a_record_gives_its_line() {
        let mut keys = vec![
            key(b'a', "00ff"),
            key(b'g', "g1"),
            key(b'i', "f1"),
            key(b'k', "k1"),
            key(b'p', "alice"),
            key(b'r', "e1"),
            key(b'w', "t1"),
        ];
        keys.sort();
        let line = |k: Vec<u8>| keys.iter().position(|x| *x == k).expect("a key of the input") as u64 + 2;
        let cases = [
            ("audience 00ff does not match its kind and members", line(key(b'a', "00ff"))),
            ("item `f1` names unknown source `f0`", line(key(b'i', "f1"))),
            ("grant `g1` names unknown item", line(key(b'g', "g1"))),
            ("root capability `k1` was not issued by the device's owner", line(key(b'k', "k1"))),
            ("live relation grant `e1` names undeclared relation `r`", line(key(b'r', "e1"))),
            ("participant `alice` stored twice", line(key(b'p', "alice"))),
            ("trust delegation `t1` is half revoked", line(key(b'w', "t1"))),
            ("item `f9` stored twice", 0),
            ("item sequence has a gap at 3", 0),
            ("unknown participant `bob` in records", 0),
        ];
        for (message, want) in cases {
            assert_eq!(named_line(&keys, message), want, "{message}");
        }
        assert_eq!(line_of(&keys, &key(b'i', "f1")), 4, "header, audience, grant, then the item");
    }
}
