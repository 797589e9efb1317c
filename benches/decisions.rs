//! Decision benchmarks.
fn main() {}
