//! The one integration-test binary: `suite/` holds the tests, `support/` the helpers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
mod support;
