//! The regression catalogue of hostile inputs (`inputs`), and what each must get: in process
//! through the admission entry point (`engine`), and over the wire from the real server while
//! its probes keep answering (`server`); hostile Runtime Extension answers through the real
//! client (`extensions`); the offline commands on hostile files (`offline`) and against hostile
//! API servers (`api_reads`); hostile kubeconfigs and names against what the commands print
//! (`cli_output`).

mod api_reads;
mod cli_output;
#[path = "../common/mod.rs"]
mod common;
mod conversion;
mod conversion_inputs;
mod engine;
mod extensions;
mod inputs;
#[path = "../local_extension/mod.rs"]
mod local_extension;
mod offline;
mod peak;
mod server;
