//! Placeholder; see the module owner.
