//! Identifier syntax shared by participants, items, stores and grants (SPEC §1.1).

/// Longest identifier accepted anywhere: `[a-z0-9][a-z0-9_.@-]{0,127}`.
pub const MAX_ID_LEN: usize = 128;

/// Why a string is not a valid identifier.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("identifier is empty")]
    Empty,
    #[error("identifier is longer than {MAX_ID_LEN} characters")]
    TooLong,
    #[error("identifier must start with a lowercase letter or digit")]
    BadStart,
    #[error("identifier may only contain lowercase letters, digits and `_.@-`")]
    BadChar,
    #[error("the anonymous participant can never be named")]
    Anonymous,
}

/// Names that would denote the anonymous participant `⊥` if they were accepted.
const ANONYMOUS_SPELLINGS: [&str; 4] = ["⊥", "*", "anonymous", "_"];

/// Checks `id` against `[a-z0-9][a-z0-9_.@-]{0,127}` and refuses spellings of `⊥`.
pub fn validate_id(id: &str) -> Result<(), IdError> {
    if ANONYMOUS_SPELLINGS.contains(&id) {
        return Err(IdError::Anonymous);
    }
    let bytes = id.as_bytes();
    let Some(first) = bytes.first() else {
        return Err(IdError::Empty);
    };
    if bytes.len() > MAX_ID_LEN {
        return Err(IdError::TooLong);
    }
    if !(first.is_ascii_lowercase() || first.is_ascii_digit()) {
        return Err(IdError::BadStart);
    }
    let ok = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.@-".contains(b);
    if bytes.iter().all(ok) {
        Ok(())
    } else {
        Err(IdError::BadChar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_spec_alphabet() {
        for id in ["a", "0", "bob", "bob@example.com", "u-1_2.3", &"a".repeat(128)] {
            assert_eq!(validate_id(id), Ok(()), "{id}");
        }
    }

    #[test]
    fn refuses_everything_else() {
        assert_eq!(validate_id(""), Err(IdError::Empty));
        assert_eq!(validate_id(&"a".repeat(129)), Err(IdError::TooLong));
        assert_eq!(validate_id("-a"), Err(IdError::BadStart));
        assert_eq!(validate_id("Bob"), Err(IdError::BadStart));
        assert_eq!(validate_id("a b"), Err(IdError::BadChar));
        assert_eq!(validate_id("a/b"), Err(IdError::BadChar));
        assert_eq!(validate_id("⊥"), Err(IdError::Anonymous));
        assert_eq!(validate_id("anonymous"), Err(IdError::Anonymous));
    }
}
