//! Process logging for binaries: env_logger with `key=value` messages in
//! "human" format, or one JSON object per line in "json" format.
//! `RUST_LOG`, when set, overrides the configured level.
//!
//! Logs go to stdout, as the existing cuzk daemon's do (tracing's default
//! writer): setups that capture the daemon's stdout (a redirect, a
//! supervisor keeping only stdout) keep its log when they switch to ours.

use crate::config::LoggingConfig;
use std::io::Write;

pub fn init(cfg: &LoggingConfig) -> Result<(), String> {
    let mut b = env_logger::Builder::new();
    b.target(env_logger::Target::Stdout);
    b.parse_filters(&cfg.level);
    if let Ok(filters) = std::env::var("RUST_LOG") {
        b.parse_filters(&filters);
    }
    match cfg.format.as_str() {
        "json" => {
            b.format(|buf, rec| {
                let line = serde_json::json!({
                    "ts": buf.timestamp_millis().to_string(),
                    "level": rec.level().as_str(),
                    "target": rec.target(),
                    "msg": rec.args().to_string(),
                });
                writeln!(buf, "{line}")
            });
        }
        "human" => {
            b.format(|buf, rec| writeln!(buf, "{} {:<5} {}: {}", buf.timestamp_millis(), rec.level(), rec.target(), rec.args()));
        }
        other => return Err(format!("logging.format {other:?} is not \"human\" or \"json\"")),
    }
    b.try_init().map_err(|e| format!("cannot install the logger: {e}"))
}
