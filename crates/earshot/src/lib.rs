//! Library half of the `earshot` binary: the commands that are more than wiring (the
//! four-fridges demonstration, `earshot validate` and its scenario runner, the MCP server
//! (`earshot mcp`), the choice of datastore, the settings of `serve` and the logger), kept here so the test suite can run them
//! in process.

pub mod client;
pub mod config;
pub mod datastore;
pub mod fridges;
pub mod mcp;
pub mod telemetry;
pub mod validate;
