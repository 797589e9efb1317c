//! One integration-test binary.
