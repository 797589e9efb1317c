//! One integration-test binary: every workspace-level test module, so linking happens once.

mod context;
mod context_fault;
mod crash;
mod damaged;
mod device_faults;
mod devices;
mod devices_props;
mod differential;
mod e2e;
mod eval;
mod faults;
mod full_disk;
mod fuzz_replay;
mod hostile;
mod http;
mod model;
mod openapi;
mod oracle;
mod postgres;
mod properties;
mod scenarios;
mod storage_faults;
mod tidy;
mod topology;
