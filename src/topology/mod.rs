//! The topology engine: what a ClusterClass allows and what a topology should create.

pub mod compatibility;
