//! Unit tests of the converters on YAML fixtures.
