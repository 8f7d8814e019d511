//! The regression catalogue of hostile inputs (`inputs`), and what each must get: in process
//! through the admission entry point (`engine`), and over the wire from the real server while
//! its probes keep answering (`server`); the offline commands on hostile files (`offline`).

#[path = "../common/mod.rs"]
mod common;
mod conversion;
mod engine;
mod inputs;
mod offline;
mod server;
