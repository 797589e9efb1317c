//! One integration-test binary: every workspace-level test module, so linking happens once.

mod context;
mod crash;
mod differential;
mod e2e;
mod eval;
mod http;
mod openapi;
mod oracle;
mod properties;
mod scenarios;
mod storage_faults;
mod tidy;
