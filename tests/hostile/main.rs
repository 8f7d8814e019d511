//! The regression catalogue of hostile inputs (`inputs`), and what each must get: in process
//! through the admission entry point (`engine`).

mod engine;
mod inputs;
