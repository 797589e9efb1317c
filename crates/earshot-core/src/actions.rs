//! The actions a capability carries, as one small value: the names joined by spaces, kept inline
//! in the capability's record when short (nearly always), so a decision compares the requested
//! action without a further read.

use std::fmt;

use crate::compact::InlineStr;
use crate::schema::is_name;

/// Bytes kept inline: `read write subscribe` and the like.
const INLINE_ACTIONS: usize = 22;

/// A non-empty list of action names, in the order given (the store keeps them sorted and
/// without duplicates).
#[derive(Clone, PartialEq, Eq)]
pub struct Actions {
    text: InlineStr<INLINE_ACTIONS>,
}

/// Why a list of actions was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActionsError {
    #[error("at least one action is required")]
    Empty,
    #[error("`{0}` is not an action name")]
    NotAName(String),
}

impl Actions {
    /// The list of `names`, each of which must be an action name (so none contains the space
    /// that separates them).
    pub fn new<S: AsRef<str>>(names: &[S]) -> Result<Self, ActionsError> {
        if names.is_empty() {
            return Err(ActionsError::Empty);
        }
        let mut joined = String::new();
        for (i, n) in names.iter().enumerate() {
            let n = n.as_ref();
            if !is_name(n) {
                return Err(ActionsError::NotAName(n.chars().take(64).collect()));
            }
            if i > 0 {
                joined.push(' ');
            }
            joined.push_str(n);
        }
        Ok(Actions { text: InlineStr::new(&joined) })
    }

    /// Whether `action` is one of the names.
    pub fn contains(&self, action: &str) -> bool {
        let a = action.as_bytes();
        self.text.bytes().split(|b| *b == b' ').any(|n| n == a)
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.text.as_str().split(' ')
    }

    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_string).collect()
    }
}

impl fmt::Debug for Actions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_compares_whole_names() {
        let a = Actions::new(&["read", "write"]).unwrap();
        assert!(a.contains("read") && a.contains("write"));
        assert!(!a.contains("rea") && !a.contains("ead") && !a.contains("read write") && !a.contains(""));
        assert!(!a.contains("writes") && !a.contains(" "));
        assert_eq!(a.to_vec(), vec!["read".to_string(), "write".to_string()]);
        assert_eq!(format!("{a:?}"), r#"["read", "write"]"#);
    }

    #[test]
    fn long_lists_behave_like_short_ones() {
        let names: Vec<String> = (0..16).map(|i| format!("action-{i:02}")).collect();
        let a = Actions::new(&names).unwrap();
        assert!(!a.text.is_inline());
        assert!(names.iter().all(|n| a.contains(n)));
        assert!(!a.contains("action-16") && !a.contains("action"));
        assert_eq!(a.to_vec(), names);
    }

    #[test]
    fn only_action_names_are_accepted() {
        assert_eq!(Actions::new::<&str>(&[]), Err(ActionsError::Empty));
        // A name with the separator in it would read as two names: refused.
        assert!(matches!(Actions::new(&["read write"]), Err(ActionsError::NotAName(_))));
        assert!(matches!(Actions::new(&[""]), Err(ActionsError::NotAName(_))));
        assert!(matches!(Actions::new(&["Read"]), Err(ActionsError::NotAName(_))));
    }
}
