//! Consistency tokens: an opaque spelling of (store, incarnation, revision) that clients carry
//! between calls.
//!
//! Format `<revision>.<tag>`. The tag is 16 hex digits: the first 8 from SHA-256 over the store
//! id, so that a token from one store is recognised and refused by another; the last 8 name the
//! store's incarnation (`MetaRecord::incarnation`), so that a token from a store that was
//! deleted and created again under the same id is refused too, with its own error. A store
//! created before incarnations were kept has the tag it always had (all 16 digits from the
//! store id), so its clients' tokens stay valid. `Consistency` is how a read names the
//! revision it needs with such a token.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{KernelError, Result};

/// The store's tag (the part after the dot), for its incarnation: a running store computes it
/// once ([`encode_with_tag`]) rather than per read.
pub fn tag(store: &str, incarnation: Option<&str>) -> String {
    store_tag(b"earshot.token.v1\0", b"earshot.token.incarnation\0", store, incarnation)
}

/// A 16-hex-digit tag of `store` in `incarnation` under two labels (tokens and list cursors
/// each have their own): the first half SHA-256 over the first label and the store id, the
/// second over the second label, the id and the incarnation; without an incarnation, all 16
/// digits from the first hash (the spelling of every release before incarnations).
pub fn store_tag(by_store: &[u8], by_life: &[u8], store: &str, incarnation: Option<&str>) -> String {
    let mut h = Sha256::new();
    h.update(by_store);
    h.update(store.as_bytes());
    let store_hash: [u8; 32] = h.finalize().into();
    match incarnation {
        None => hex::encode(&store_hash[..8]),
        Some(inc) => {
            let mut h = Sha256::new();
            h.update(by_life);
            h.update(store.as_bytes());
            h.update(b"\0");
            h.update(inc.as_bytes());
            let life: [u8; 32] = h.finalize().into();
            format!("{}{}", hex::encode(&store_hash[..4]), hex::encode(&life[..4]))
        }
    }
}

/// The token for `revision` of `store` in `incarnation`.
pub fn encode(store: &str, incarnation: Option<&str>, revision: u64) -> String {
    encode_with_tag(&tag(store, incarnation), revision)
}

/// The token for `revision` of the store whose [`tag`] is `tag` (equal to [`encode`]'s). Every
/// read's answer carries one, so the decimal is written by hand rather than through
/// `core::fmt`, whose machinery costs several times the few digits.
pub fn encode_with_tag(tag: &str, revision: u64) -> String {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    let mut rest = revision;
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let mut out = String::with_capacity(digits.len() - start + 1 + tag.len());
    out.extend(digits[start..].iter().map(|&d| char::from(d)));
    out.push('.');
    out.push_str(tag);
    out
}

/// The revision a token names; refuses malformed tokens, tokens of another store, and tokens
/// of another incarnation of this one (`TokenIncarnationMismatch`).
pub fn decode(store: &str, incarnation: Option<&str>, token: &str) -> Result<u64> {
    decode_with_tag(store, &tag(store, incarnation), token)
}

/// [`decode`] against the store's precomputed [`tag`].
pub fn decode_with_tag(store: &str, tag: &str, token: &str) -> Result<u64> {
    if token.len() > 64 {
        return Err(KernelError::InvalidToken);
    }
    let (rev, t) = token.split_once('.').ok_or(KernelError::InvalidToken)?;
    let rev: u64 = rev.parse().map_err(|_| KernelError::InvalidToken)?;
    if t.len() != 16 || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(KernelError::InvalidToken);
    }
    if t != tag {
        // The first half names the store id, the second its incarnation.
        if t.get(..8) == tag.get(..8) {
            return Err(KernelError::TokenIncarnationMismatch(store.chars().take(128).collect()));
        }
        return Err(KernelError::TokenStoreMismatch);
    }
    Ok(rev)
}

/// How a read picks its snapshot: `"latest"` (the newest revision this replica has applied),
/// `"fully_consistent"` (the datastore's head, read first: everything committed on any replica
/// before the read), `{"at_least": token}` or `{"at_exact": token}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Consistency {
    #[default]
    Latest,
    FullyConsistent,
    AtLeast(String),
    AtExact(String),
}

/// Read by hand rather than derived, so that naming both `at_least` and `at_exact` (or neither)
/// is refused with a message that says so, as a request error rather than a JSON syntax error.
impl<'de> Deserialize<'de> for Consistency {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Consistency;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(r#""latest", "fully_consistent", {"at_least": token} or {"at_exact": token}"#)
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Consistency, E> {
                match v {
                    "latest" => Ok(Consistency::Latest),
                    "fully_consistent" => Ok(Consistency::FullyConsistent),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Consistency, A::Error> {
                use serde::de::Error;
                let mut found: Option<Consistency> = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    let token: String = map.next_value()?;
                    let this = match key.as_ref() {
                        "at_least" => Consistency::AtLeast(token),
                        "at_exact" => Consistency::AtExact(token),
                        other => return Err(A::Error::unknown_field(other, &["at_least", "at_exact"])),
                    };
                    if found.replace(this).is_some() {
                        return Err(A::Error::custom(
                            "`consistency` names one requirement: either `at_least` or `at_exact`, not both",
                        ));
                    }
                }
                found.ok_or_else(|| {
                    A::Error::custom("`consistency` needs `at_least` or `at_exact` (or the string \"latest\")")
                })
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spelling_is_stable() {
        // Clients hold tokens across restarts and versions: the spelling must not drift. A
        // store without an incarnation keeps the tag of every earlier release.
        let legacy = {
            let mut h = Sha256::new();
            h.update(b"earshot.token.v1\0");
            h.update(b"s1");
            hex::encode(&h.finalize()[..8])
        };
        assert_eq!(tag("s1", None), legacy);
        assert_eq!(encode("s1", None, 42), format!("42.{legacy}"));
        assert_eq!(tag("s1", Some("00ff")).len(), 16);
        assert_eq!(tag("s1", Some("00ff"))[..8], legacy[..8], "the store half is the same in every incarnation");
        // The hand-written decimal, at its edges: one digit, a carry, the widest revision.
        let t = tag("s1", Some("00ff"));
        for revision in [0, 1, 9, 10, 99, 100, 1_000_007, u64::MAX - 1, u64::MAX] {
            assert_eq!(encode_with_tag(&t, revision), format!("{revision}.{t}"));
            assert_eq!(decode("s1", Some("00ff"), &encode_with_tag(&t, revision)).ok(), Some(revision));
        }
    }

    #[test]
    fn round_trip_and_refusals() {
        let t = encode("s1", Some("a1"), 42);
        assert_eq!(decode("s1", Some("a1"), &t).ok(), Some(42));
        assert!(matches!(decode("s2", Some("a1"), &t), Err(KernelError::TokenStoreMismatch)));
        for (old, new) in [(Some("a1"), Some("b2")), (None, Some("b2")), (Some("a1"), None)] {
            let t = encode("s1", old, 42);
            assert!(matches!(decode("s1", new, &t), Err(KernelError::TokenIncarnationMismatch(_))), "{old:?} {new:?}");
        }
        for bad in ["", "42", "x.0011223344556677", "42.zz", &"9".repeat(80)] {
            assert!(matches!(decode("s1", None, bad), Err(KernelError::InvalidToken)), "{bad}");
        }
    }
}
