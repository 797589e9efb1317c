//! Consistency tokens: an opaque spelling of (store, revision) that clients carry between calls.
//!
//! Format `<revision>.<tag>`, where the tag is the first 8 bytes of SHA-256 over the store id,
//! so a token from one store is recognised and refused by another.

use sha2::{Digest, Sha256};

use crate::error::{Result, StoreError};

fn tag(store: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"earshot.token.v1\0");
    h.update(store.as_bytes());
    hex::encode(&h.finalize()[..8])
}

/// The token for `revision` of `store`.
pub fn encode(store: &str, revision: u64) -> String {
    format!("{revision}.{}", tag(store))
}

/// The revision a token names; refuses malformed tokens and tokens of another store.
pub fn decode(store: &str, token: &str) -> Result<u64> {
    if token.len() > 64 {
        return Err(StoreError::InvalidToken);
    }
    let (rev, t) = token.split_once('.').ok_or(StoreError::InvalidToken)?;
    let rev: u64 = rev.parse().map_err(|_| StoreError::InvalidToken)?;
    if t.len() != 16 || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(StoreError::InvalidToken);
    }
    if t != tag(store) {
        return Err(StoreError::TokenStoreMismatch);
    }
    Ok(rev)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let t = encode("s1", 42);
        assert_eq!(decode("s1", &t).ok(), Some(42));
        assert!(matches!(decode("s2", &t), Err(StoreError::TokenStoreMismatch)));
        for bad in ["", "42", "x.0011223344556677", "42.zz", &"9".repeat(80)] {
            assert!(matches!(decode("s1", bad), Err(StoreError::InvalidToken)), "{bad}");
        }
    }
}
