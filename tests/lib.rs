//! Shared helpers for the workspace tests.
