//! Per-RPC counters of the daemon (requests, errors by status code), added
//! to the engine's Prometheus text.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

/// `INVALID_ARGUMENT` for grpcio's Debug form `3-INVALID_ARGUMENT`.
pub fn code_name(c: grpcio::RpcStatusCode) -> String {
    let d = format!("{c:?}");
    d.split_once('-').map_or(d.clone(), |(_, name)| name.to_string())
}

#[derive(Default)]
pub struct RpcMetrics {
    /// (method, "OK" or the gRPC status code) → count.
    calls: Mutex<BTreeMap<(&'static str, String), u64>>,
}

impl RpcMetrics {
    pub fn record(&self, method: &'static str, code: Option<grpcio::RpcStatusCode>) {
        let code = code.map_or_else(|| "OK".to_string(), code_name);
        *self.calls.lock().unwrap_or_else(|e| e.into_inner()).entry((method, code)).or_default() += 1;
    }

    pub fn prometheus(&self) -> String {
        let mut out = String::from(
            "# HELP cuzk_rpc_requests_total gRPC calls answered, by method and status code.\n# TYPE cuzk_rpc_requests_total counter\n",
        );
        for ((method, code), n) in self.calls.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = writeln!(out, "cuzk_rpc_requests_total{{method=\"{method}\",code=\"{code}\"}} {n}");
        }
        out
    }
}
