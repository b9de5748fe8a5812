//! Connecting to a daemon: the address forms the `cuzk` client accepts and
//! a blocking grpcio client with the daemon's message limits.

use crate::proto::{ProvingEngineClient, MAX_MESSAGE_BYTES};
use grpcio::{ChannelBuilder, EnvBuilder};
use std::sync::Arc;

/// The gRPC target for an address: `unix:///path` and `unix:/path` stay as
/// they are, `http://host:port` (the old bench tool's form) loses its
/// scheme, `host:port` is used as given.
pub fn target(addr: &str) -> Result<String, String> {
    let addr = addr.trim();
    if let Some(path) = addr.strip_prefix("unix://") {
        if !path.starts_with('/') {
            return Err(format!("{addr:?}: a unix socket address needs an absolute path (unix:///path/to/socket)"));
        }
        return Ok(format!("unix://{path}"));
    }
    if addr.starts_with("unix:") {
        return Ok(addr.to_string());
    }
    let hostport = addr.strip_prefix("http://").unwrap_or(addr);
    if hostport.is_empty() || !hostport.contains(':') || hostport.contains('/') {
        return Err(format!("{addr:?} is not host:port or unix:///path"));
    }
    Ok(hostport.to_string())
}

/// A client for the daemon at `addr` (connects lazily: the first call
/// reports an unreachable daemon). Calls block the calling thread.
pub fn connect(addr: &str) -> Result<ProvingEngineClient, String> {
    let target = target(addr)?;
    let env = Arc::new(EnvBuilder::new().cq_count(1).name_prefix("cuzk-client").build());
    let ch = ChannelBuilder::new(env)
        .max_receive_message_len(MAX_MESSAGE_BYTES as i32)
        .max_send_message_len(MAX_MESSAGE_BYTES as i32)
        .connect(&target);
    Ok(ProvingEngineClient::new(ch))
}

/// A readable description of a failed call.
pub fn describe(e: &grpcio::Error) -> String {
    match e {
        grpcio::Error::RpcFailure(s) => format!("{}: {}", crate::daemon::rpc_metrics::code_name(s.code()), s.message()),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::target;

    #[test]
    fn address_forms() {
        assert_eq!(target("unix:///run/cuzk.sock").unwrap(), "unix:///run/cuzk.sock");
        assert_eq!(target("http://127.0.0.1:9820").unwrap(), "127.0.0.1:9820");
        assert_eq!(target("localhost:9820").unwrap(), "localhost:9820");
        assert!(target("unix://relative.sock").is_err());
        assert!(target("nonsense").is_err());
    }
}
