//! Short strings kept inside the value that owns them (no allocation, no dependent read), longer
//! ones on the heap: the text of path patterns and the action lists of capabilities, which a
//! decision reads together with the record that holds them, and the store's name-map keys.

/// A string of at most `N` bytes stored inline, else boxed. Hashes, compares and borrows as
/// the `str` it holds, so a map keyed by it is asked with a plain `&str`.
#[derive(Clone)]
pub enum InlineStr<const N: usize> {
    Inline { len: u8, buf: [u8; N] },
    Heap(Box<str>),
}

impl<const N: usize> InlineStr<N> {
    pub fn new(s: &str) -> Self {
        let mut buf = [0u8; N];
        match (buf.get_mut(..s.len()), u8::try_from(s.len())) {
            (Some(dst), Ok(len)) => {
                dst.copy_from_slice(s.as_bytes());
                InlineStr::Inline { len, buf }
            }
            _ => InlineStr::Heap(s.into()),
        }
    }

    pub fn bytes(&self) -> &[u8] {
        match self {
            InlineStr::Inline { len, buf } => buf.get(..usize::from(*len)).unwrap_or(&[]),
            InlineStr::Heap(s) => s.as_bytes(),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            // Copied whole from a `&str`, so always valid UTF-8 (the fallback is unreachable).
            InlineStr::Inline { .. } => std::str::from_utf8(self.bytes()).unwrap_or_default(),
            InlineStr::Heap(s) => s,
        }
    }

    pub fn is_inline(&self) -> bool {
        matches!(self, InlineStr::Inline { .. })
    }
}

impl<const N: usize> PartialEq for InlineStr<N> {
    fn eq(&self, other: &Self) -> bool {
        self.bytes() == other.bytes()
    }
}

impl<const N: usize> Eq for InlineStr<N> {}

/// As the `str`: required for a map keyed by `InlineStr` to be asked with a `&str`.
impl<const N: usize> std::hash::Hash for InlineStr<N> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl<const N: usize> std::borrow::Borrow<str> for InlineStr<N> {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl<const N: usize> std::fmt::Debug for InlineStr<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_strings_stay_inline_and_long_ones_do_not() {
        let exact = "a".repeat(8);
        let s: InlineStr<8> = InlineStr::new(&exact);
        assert!(s.is_inline());
        assert_eq!(s.as_str(), exact);
        let long = "é".repeat(5);
        let l: InlineStr<8> = InlineStr::new(&long);
        assert!(!l.is_inline());
        assert_eq!(l.as_str(), long);
        assert_eq!(InlineStr::<8>::new(""), InlineStr::<8>::new(""));
        assert_ne!(InlineStr::<8>::new("ab"), InlineStr::<8>::new("abc"));
    }
}
