//! JSON answers of the reads: any answer through `serde_json` ([`JsonAnswer`]), and a check's,
//! the hottest, written field by field ([`CheckAnswer`]) to the same bytes.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use earshot_store::model::DecisionView;
use serde::Serialize;

use crate::reads::AtRevision;

/// A JSON answer, encoded as axum's [`axum::Json`] encodes it (the same bytes and
/// `content-type`, the same plain-text 500 should encoding fail), into a buffer sized for a
/// decision's answer: [`axum::Json`] starts at 128 bytes, so a check's answer (about 250) was
/// copied as the buffer grew.
pub(crate) struct JsonAnswer<T>(pub T);

/// Room for a check's answer (item, decision, role, token, container) without growing.
const ANSWER_CAPACITY: usize = 512;

impl<T: Serialize> IntoResponse for JsonAnswer<T> {
    fn into_response(self) -> Response {
        let mut buf = Vec::with_capacity(ANSWER_CAPACITY);
        let written = serde_json::to_writer(&mut buf, &self.0);
        respond(buf, written)
    }
}

/// One check's answer: the bytes `JsonAnswer<AtRevision<DecisionView>>` writes, with the
/// field names written as the constants they are. Through serde each name is escaped byte by
/// byte and the decision's fields go through `#[serde(flatten)]`'s map adapter, work the
/// hottest answer need not repeat (BENCHMARKS.md, "Over HTTP: checks next to
/// `/healthz`, and writes"). Every value still goes through `serde_json`, so escaping is serde's.
pub(crate) struct CheckAnswer(pub AtRevision<DecisionView>);

impl IntoResponse for CheckAnswer {
    fn into_response(self) -> Response {
        let mut buf = Vec::with_capacity(ANSWER_CAPACITY);
        let written = write_check_answer(&mut buf, &self.0);
        respond(buf, written)
    }
}

/// The answer for `buf`, or, should encoding have failed, a plain-text 500 (as axum's).
fn respond(buf: Vec<u8>, written: serde_json::Result<()>) -> Response {
    match written {
        Ok(()) => {
            // Built directly: through `(headers, Vec<u8>)` the body is first labelled
            // `application/octet-stream`, then relabelled.
            let mut answer = Response::new(axum::body::Body::from(buf));
            answer.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            answer
        }
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            [(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"))],
            e.to_string(),
        )
            .into_response(),
    }
}

/// Writes `answer` as `serde_json::to_writer` writes it: the same fields in the same order,
/// the same ones left out. The destructuring names every field, so a field added to either
/// type stops the build here until it is written too.
fn write_check_answer(out: &mut Vec<u8>, answer: &AtRevision<DecisionView>) -> serde_json::Result<()> {
    let AtRevision { body, revision, token, latest_revision, container } = answer;
    let DecisionView {
        item,
        admitted,
        reason,
        basis,
        grant,
        blocked_by,
        historical,
        role,
        author,
        data_reason,
        untrusted_source,
    } = body;
    out.extend_from_slice(b"{\"item\":");
    value(out, item)?;
    out.extend_from_slice(if *admitted { b",\"admitted\":true" } else { b",\"admitted\":false" });
    out.extend_from_slice(b",\"reason\":");
    value(out, reason)?;
    optional(out, b",\"basis\":", basis)?;
    optional(out, b",\"grant\":", grant)?;
    optional(out, b",\"blocked_by\":", blocked_by)?;
    optional(out, b",\"historical\":", historical)?;
    optional(out, b",\"role\":", role)?;
    optional(out, b",\"author\":", author)?;
    optional(out, b",\"data_reason\":", data_reason)?;
    optional(out, b",\"untrusted_source\":", untrusted_source)?;
    out.extend_from_slice(b",\"revision\":");
    value(out, revision)?;
    out.extend_from_slice(b",\"token\":");
    value(out, token)?;
    optional(out, b",\"latest_revision\":", latest_revision)?;
    optional(out, b",\"container\":", container)?;
    out.push(b'}');
    Ok(())
}

/// `key` (with its comma, quotes and colon) and the value, when there is one.
fn optional<T: Serialize>(out: &mut Vec<u8>, key: &[u8], v: &Option<T>) -> serde_json::Result<()> {
    match v {
        Some(v) => {
            out.extend_from_slice(key);
            value(out, v)
        }
        None => Ok(()),
    }
}

fn value<T: Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) -> serde_json::Result<()> {
    serde_json::to_writer(&mut *out, v)
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use earshot_core::{Role, State};
    use earshot_store::model::{BlockedBy, ContainerResolution, UnresolvedReason, UntrustedSource};

    use super::*;

    /// A decision with the optional fields whose bit is set in `mask`, with strings that need
    /// escaping wherever a string can be.
    fn decision(mask: u32) -> DecisionView {
        let odd = |s: &str| format!("{s}\"\\\n\u{1}é\u{2028}");
        let on = |bit: u32| mask & (1 << bit) != 0;
        DecisionView {
            item: odd("item"),
            admitted: on(0),
            reason: if on(1) { Cow::Borrowed("origin_audience") } else { Cow::Owned(odd("reason")) },
            basis: on(2).then_some(Cow::Borrowed("origin")),
            grant: on(3).then(|| odd("grant")),
            blocked_by: on(4).then(|| BlockedBy { state: State::Revoked, item: odd("blocker") }),
            historical: on(5).then(|| Box::new(decision(mask & !(1 << 5)))),
            role: on(6).then_some(if on(0) { Role::Data } else { Role::Instruction }),
            author: on(7).then(|| odd("author")),
            data_reason: on(8).then_some(Cow::Borrowed("untrusted_author")),
            untrusted_source: on(9).then(|| UntrustedSource { item: odd("source"), author: on(10).then(|| odd("by")) }),
        }
    }

    #[test]
    fn a_check_answer_is_byte_for_byte_serdes() {
        // Every combination of present and absent fields, on both sides of the flatten.
        for mask in 0..(1 << 12) {
            let answer = AtRevision {
                body: decision(mask),
                revision: if mask & 1 == 0 { 0 } else { u64::MAX },
                token: "18446744073709551615.00112233\"44556677".into(),
                latest_revision: (mask & (1 << 10) != 0).then_some(42),
                container: (mask & (1 << 11) != 0).then(|| {
                    if mask & (1 << 1) == 0 {
                        ContainerResolution::resolved()
                    } else {
                        ContainerResolution::unresolved(UnresolvedReason::UnknownParticipant, "viewers.participants[0]")
                    }
                }),
            };
            let mut ours = Vec::new();
            write_check_answer(&mut ours, &answer).expect("encodes");
            let serdes = serde_json::to_vec(&answer).expect("encodes");
            assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&serdes), "mask {mask:#b}");
        }
    }
}
