//! The daemon's TOML configuration (the same keys as the existing
//! `cuzk-daemon`, see `configs/cuzk.example.toml`).
//!
//! Loading is two passes: the raw TOML table is checked against [`KEYS`]
//! first, so an unknown key is reported as `[section] key` and deprecated
//! keys are dropped with a warning; then serde fills the typed sections
//! (with `deny_unknown_fields` as a backstop).

mod units;

pub use units::{format_size, parse_duration, parse_size, ByteSize, HumanDuration};

use log::warn;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every accepted key, by section.
pub const KEYS: &[(&str, &[&str])] = &[
    ("daemon", &["listen", "status_listen", "shutdown"]),
    ("srs", &["param_cache", "self_check", "trusted_params"]),
    ("memory", &["total_budget", "safety_margin", "eviction_min_idle"]),
    ("gpus", &["devices", "gpu_threads", "gpu_workers_per_device", "vram_limit"]),
    ("scheduler", &["max_batch_size", "max_batch_wait_ms", "sort_by_type"]),
    ("synthesis", &["threads", "partition_workers", "pce"]),
    ("pipeline", &["enabled", "synthesis_lookahead", "synthesis_concurrency", "slot_size"]),
    ("logging", &["level", "format", "timeline"]),
];

/// Keys of the existing daemon that no longer do anything.
pub const DEPRECATED: &[(&str, &str, &str)] = &[
    ("srs", "preload", "SRS entries load on first use; preload them through the API (PreloadSRS)"),
    ("memory", "pinned_budget", "the single memory.total_budget covers pinned memory"),
    ("memory", "working_memory_budget", "the single memory.total_budget covers working memory"),
];

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("config is not valid TOML: {0}")]
    Syntax(String),
    #[error("unknown config section [{0}] (known sections: daemon, srs, memory, gpus, scheduler, synthesis, pipeline, logging)")]
    UnknownSection(String),
    #[error("unknown config key `{key}` in section [{section}] (known keys: {known})")]
    UnknownKey { section: String, key: String, known: String },
    #[error("config section [{0}] must be a table")]
    NotATable(String),
    #[error("bad value in section [{section}]: {message}")]
    Value { section: String, message: String },
    #[error("bad config value {key}: {message}")]
    Invalid { key: &'static str, message: String },
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub daemon: DaemonConfig,
    pub srs: SrsConfig,
    pub memory: MemoryConfig,
    pub gpus: GpuConfig,
    pub scheduler: SchedulerConfig,
    pub synthesis: SynthesisConfig,
    pub pipeline: PipelineConfig,
    pub logging: LoggingConfig,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct DaemonConfig {
    /// `host:port` or `unix:///path`.
    pub listen: String,
    /// HTTP status server address; empty = off.
    pub status_listen: String,
    /// On SIGINT/SIGTERM: "drain" (finish jobs already submitted) or
    /// "cancel" (cancel them). A second signal during a drain cancels.
    pub shutdown: String,
}

impl Default for DaemonConfig {
    fn default() -> Self {
        Self { listen: "unix:///run/cuzk/cuzk.sock".into(), status_listen: String::new(), shutdown: "drain".into() }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SrsConfig {
    pub param_cache: PathBuf,
    /// Verify every Filecoin proof with its circuit's `.vk` (from
    /// `param_cache`) before replying; a proof that fails is a failed job.
    pub self_check: bool,
    /// Skip the subgroup check of every point when reading Filecoin
    /// `.params` files (the on-curve check always runs): only for files
    /// checked otherwise, e.g. against their published digests.
    pub trusted_params: bool,
}

impl Default for SrsConfig {
    fn default() -> Self {
        Self { param_cache: "/var/tmp/filecoin-proof-parameters".into(), self_check: true, trusted_params: false }
    }
}

/// `"auto"` (MemTotal − safety_margin) or an explicit size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum TotalBudget {
    Auto,
    Bytes(u64),
}

impl<'de> Deserialize<'de> for TotalBudget {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Str(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) => Ok(TotalBudget::Bytes(n)),
            Raw::Str(s) if s.trim().eq_ignore_ascii_case("auto") => Ok(TotalBudget::Auto),
            Raw::Str(s) => parse_size(&s)
                .map(TotalBudget::Bytes)
                .map_err(|e| serde::de::Error::custom(format!("total_budget: {e} (or \"auto\")"))),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    pub total_budget: TotalBudget,
    pub safety_margin: ByteSize,
    pub eviction_min_idle: HumanDuration,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self {
            total_budget: TotalBudget::Auto,
            safety_margin: ByteSize(5 << 30),
            eviction_min_idle: HumanDuration(Duration::from_secs(300)),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct GpuConfig {
    /// GPU ordinals to use; empty = all.
    pub devices: Vec<u32>,
    /// CPU threads for the prover's CPU-side work; 0 = all CPUs.
    pub gpu_threads: usize,
    pub gpu_workers_per_device: usize,
    /// Caps the VRAM budget the process tracks per device (e.g. "16GiB" to
    /// act like a small card); 0 = the device's own memory.
    pub vram_limit: ByteSize,
}

impl Default for GpuConfig {
    fn default() -> Self {
        Self { devices: Vec::new(), gpu_threads: 0, gpu_workers_per_device: 2, vram_limit: ByteSize(0) }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SchedulerConfig {
    /// Jobs of one circuit proved together; 1 = batching off.
    pub max_batch_size: usize,
    pub max_batch_wait_ms: u64,
    /// Within a priority, batch jobs of the head job's circuit ahead of
    /// older jobs of other circuits (fewer SRS switches).
    pub sort_by_type: bool,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self { max_batch_size: 1, max_batch_wait_ms: 10_000, sort_by_type: false }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SynthesisConfig {
    /// CPU threads for synthesis; 0 = all CPUs.
    pub threads: usize,
    /// Partitions synthesized at once (one thread each); 0 = `threads`.
    pub partition_workers: usize,
    /// Synthesize through each circuit's pre-compiled constraint system
    /// (witness-only synthesis + sparse products; recorded at first use
    /// or loaded from `<param_cache>/<circuit-id>.pce`).
    pub pce: bool,
}

impl Default for SynthesisConfig {
    fn default() -> Self {
        Self { threads: 0, partition_workers: 0, pce: true }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct PipelineConfig {
    /// Overlap synthesis of the next batch with proving of the current one.
    pub enabled: bool,
    /// Synthesized partitions that may wait for a prover.
    pub synthesis_lookahead: usize,
    /// Batches in synthesis at once.
    pub synthesis_concurrency: usize,
    /// Compatibility key: when non-zero, replaces synthesis_lookahead.
    pub slot_size: usize,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        Self { enabled: true, synthesis_lookahead: 1, synthesis_concurrency: 1, slot_size: 0 }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoggingConfig {
    pub level: String,
    /// "human" or "json".
    pub format: String,
    /// JSON-lines event timeline file; empty = off (env CUZK_TIMELINE wins).
    pub timeline: String,
}

impl Default for LoggingConfig {
    fn default() -> Self {
        Self { level: "info".into(), format: "human".into(), timeline: String::new() }
    }
}

impl Config {
    /// Reads and validates a config file.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.into(), source })?;
        Self::from_toml(&text)
    }

    /// Parses and validates TOML text.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| ConfigError::Syntax(e.to_string()))?;
        check_keys(&mut table)?;
        let mut config = Config::default();
        for (section, value) in table {
            let err = |e: toml::de::Error| ConfigError::Value { section: section.clone(), message: e.message().to_string() };
            match section.as_str() {
                "daemon" => config.daemon = value.try_into().map_err(err)?,
                "srs" => config.srs = value.try_into().map_err(err)?,
                "memory" => config.memory = value.try_into().map_err(err)?,
                "gpus" => config.gpus = value.try_into().map_err(err)?,
                "scheduler" => config.scheduler = value.try_into().map_err(err)?,
                "synthesis" => config.synthesis = value.try_into().map_err(err)?,
                "pipeline" => config.pipeline = value.try_into().map_err(err)?,
                "logging" => config.logging = value.try_into().map_err(err)?,
                other => return Err(ConfigError::UnknownSection(other.into())),
            }
        }
        config.validate()?;
        Ok(config)
    }

    /// Checks values that parse but make no sense.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key, message: &str| Err(ConfigError::Invalid { key, message: message.into() });
        if self.gpus.gpu_workers_per_device == 0 {
            return bad("gpus.gpu_workers_per_device", "must be at least 1");
        }
        if self.scheduler.max_batch_size == 0 {
            return bad("scheduler.max_batch_size", "must be at least 1 (1 turns batching off)");
        }
        if self.pipeline.synthesis_concurrency == 0 {
            return bad("pipeline.synthesis_concurrency", "must be at least 1");
        }
        if !matches!(self.daemon.shutdown.as_str(), "drain" | "cancel") {
            return bad("daemon.shutdown", &format!("{:?} is not \"drain\" or \"cancel\"", self.daemon.shutdown));
        }
        if !matches!(self.logging.format.as_str(), "human" | "json") {
            return bad("logging.format", &format!("{:?} is not \"human\" or \"json\"", self.logging.format));
        }
        if self.logging.level.parse::<log::LevelFilter>().is_err() {
            return bad("logging.level", &format!("{:?} is not one of off, error, warn, info, debug, trace", self.logging.level));
        }
        if let TotalBudget::Bytes(0) = self.memory.total_budget {
            return bad("memory.total_budget", "must be more than 0 bytes");
        }
        Ok(())
    }

    /// Partition synthesis threads after resolving the 0 = auto settings.
    pub fn partition_workers(&self) -> usize {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = if self.synthesis.threads == 0 { cpus } else { self.synthesis.threads };
        if self.synthesis.partition_workers == 0 { threads } else { self.synthesis.partition_workers }
    }

    /// Capacity of the queue of synthesized partitions waiting for a prover.
    pub fn gpu_queue_capacity(&self) -> usize {
        let n = if self.pipeline.slot_size > 0 { self.pipeline.slot_size } else { self.pipeline.synthesis_lookahead };
        n.max(1)
    }
}

/// Rejects unknown sections and keys; drops deprecated keys with a warning.
fn check_keys(table: &mut toml::Table) -> Result<(), ConfigError> {
    for (section, value) in table.iter_mut() {
        let known = KEYS
            .iter()
            .find(|(s, _)| s == section)
            .map(|(_, k)| *k)
            .ok_or_else(|| ConfigError::UnknownSection(section.clone()))?;
        let keys = value.as_table_mut().ok_or_else(|| ConfigError::NotATable(section.clone()))?;
        for (s, key, why) in DEPRECATED.iter().filter(|(s, ..)| s == section) {
            if keys.remove(*key).is_some() {
                warn!("config key {s}.{key} is deprecated and ignored: {why}");
            }
        }
        if let Some(key) = keys.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(ConfigError::UnknownKey { section: section.clone(), key: key.clone(), known: known.join(", ") });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
