//! The `cuzk-bin` library: the gRPC wire types, a client, and the daemon
//! (gRPC service, status/metrics HTTP server, socket handling), shared by
//! the `cuzk-daemon` and `cuzk` binaries and the integration tests.

pub mod client;
pub mod daemon;
pub mod proto;
