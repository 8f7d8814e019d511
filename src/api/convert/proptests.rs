//! Property tests: round trips over generated objects.
