//! Short strings kept inside the value that owns them (no allocation, no dependent read), longer
//! ones on the heap: the text of path patterns and the action lists of capabilities, which a
//! decision reads together with the record that holds them, the store's name-map keys and the
//! names of its items.

/// A string of at most `N` bytes stored inline, else shared on the heap. Hashes, compares and
/// borrows as the `str` it holds, so a map keyed by it is asked with a plain `&str`.
///
/// The heap form is an `Arc`, not a `Box`: the values that hold these strings are copied
/// whole when a persistent structure folds (a million item records at a time), and a copy
/// must not allocate.
#[derive(Clone)]
pub enum InlineStr<const N: usize> {
    Inline { len: u8, buf: [u8; N] },
    Heap(std::sync::Arc<str>),
}

impl<const N: usize> InlineStr<N> {
    /// The longest string kept inline; longer ones go to the heap.
    pub const CAPACITY: usize = N;

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

/// As the `str`, like other small-string types: readers of a name that is now inline keep
/// their `&*name` and `name.len()`.
impl<const N: usize> std::ops::Deref for InlineStr<N> {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl<const N: usize> std::fmt::Display for InlineStr<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
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

    #[test]
    fn a_copy_shares_a_long_string_and_the_size_stays_put() {
        let long: InlineStr<22> = InlineStr::new(&"x".repeat(40));
        let copy = long.clone();
        assert_eq!(long.as_str().as_ptr(), copy.as_str().as_ptr(), "a copy must not allocate");
        // Store records and map keys are sized around these 24 bytes.
        assert_eq!(std::mem::size_of::<InlineStr<22>>(), 24);
        assert_eq!(format!("{long}"), "x".repeat(40));
        assert_eq!(&*InlineStr::<22>::new("abc"), "abc");
    }
}
