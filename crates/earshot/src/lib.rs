//! Library half of the `earshot` binary: the commands that are more than wiring (the
//! four-fridges demonstration, the choice of datastore), kept here so the test suite can run them in process.

pub mod datastore;
pub mod fridges;
