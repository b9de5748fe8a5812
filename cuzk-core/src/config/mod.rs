//! The daemon's TOML configuration (the existing cuzk daemon's keys and
//! defaults, and ours; see `configs/cuzk.example.toml`).
//!
//! Loading is two passes: `compat` checks the raw TOML table against
//! [`KEYS`] first (unknown sections and keys, deprecated keys, values the
//! existing daemon accepted by falling back: each a warning naming it, or
//! an error with `daemon.strict_config`); then serde fills the typed
//! sections (with `deny_unknown_fields` as a backstop).

mod compat;
mod units;

pub use compat::{upstream_tuning_notes, UPSTREAM_MAX_PARALLEL_SYNTHESIS};
pub use units::{format_size, parse_duration, parse_size, ByteSize, FileMode, HumanDuration};

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every accepted key, by section.
pub const KEYS: &[(&str, &[&str])] = &[
    (
        "daemon",
        &[
            "listen",
            "status_listen",
            "shutdown",
            "shutdown_timeout",
            "socket_mode",
            "strict_config",
            "builtin_max_constraints",
            "max_waiting_calls",
        ],
    ),
    ("srs", &["param_cache", "self_check", "trusted_params", "stream_slice"]),
    ("memory", &["total_budget", "safety_margin", "eviction_min_idle", "urgent_reserve"]),
    (
        "gpus",
        &[
            "devices",
            "gpu_threads",
            "gpu_workers_per_device",
            "urgent_workers_per_device",
            "vram_limit",
            "urgent_vram_reserve",
            "cpu_fallback",
        ],
    ),
    ("scheduler", &["max_batch_size", "max_batch_wait_ms", "sort_by_type"]),
    ("synthesis", &["threads", "partition_workers", "urgent_workers", "pce", "nice"]),
    (
        "pipeline",
        &[
            "enabled",
            "synthesis_lookahead",
            "synthesis_concurrency",
            "urgent_synthesis_concurrency",
            "slot_size",
            "max_parallel_synthesis",
            "max_gpu_queue_depth",
        ],
    ),
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
    #[error("unknown config section [{0}] (known sections: daemon, srs, memory, gpus, scheduler, synthesis, pipeline, logging; daemon.strict_config is on)")]
    UnknownSection(String),
    #[error("unknown config key `{key}` in section [{section}] (known keys: {known}; daemon.strict_config is on)")]
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
    /// Unknown sections and keys, and values that do not parse, are errors
    /// instead of warnings.
    pub strict_config: bool,
    /// How long a drain at shutdown may take before the jobs still running
    /// are cancelled (below systemd's default 90 s stop timeout).
    pub shutdown_timeout: HumanDuration,
    /// Permissions of the unix socket file (octal: 0o660 or "0660").
    pub socket_mode: FileMode,
    /// Largest built-in (test) circuit the daemon proves or preloads, in
    /// constraints: without params in the cache its SRS is generated, which
    /// takes minutes and GBs for large circuits.
    pub builtin_max_constraints: usize,
    /// Calls that may wait at once (AwaitProof, Prove, SubmitProof's
    /// checks, PreloadSRS; each holds a thread while it waits); more are
    /// refused with RESOURCE_EXHAUSTED.
    pub max_waiting_calls: usize,
}

impl Default for DaemonConfig {
    fn default() -> Self {
        Self {
            listen: "unix:///run/curio/cuzk.sock".into(),
            status_listen: String::new(),
            shutdown: "drain".into(),
            strict_config: false,
            shutdown_timeout: HumanDuration(Duration::from_secs(60)),
            socket_mode: FileMode(0o660),
            builtin_max_constraints: 1 << 16,
            max_waiting_calls: 1024,
        }
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
    /// checked otherwise. Without it, official files are recognised by
    /// their published digests and other files checked point by point.
    pub trusted_params: bool,
    /// Where every GPU keeps an SRS resident in VRAM, it is loaded
    /// straight to them: its file read, checked and uploaded in slices of
    /// this size, three of which the host holds at once (not the whole
    /// SRS).
    pub stream_slice: ByteSize,
}

impl Default for SrsConfig {
    fn default() -> Self {
        Self { param_cache: "/data/zk/params".into(), self_check: true, trusted_params: false, stream_slice: ByteSize(256 << 20) }
    }
}

/// Why the param cache `dir` cannot hold parameter files (it is missing or
/// not a folder), if so: a warning at start, and the error of a circuit
/// that needs a file from it.
pub fn param_cache_problem(dir: &Path) -> Option<String> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => None,
        Ok(_) => Some(format!("srs.param_cache {} is a file, not a folder", dir.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(format!("srs.param_cache {} does not exist", dir.display())),
        Err(e) => Some(format!("srs.param_cache {}: {e}", dir.display())),
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
            Raw::Str(s) => {
                parse_size(&s).map(TotalBudget::Bytes).map_err(|e| serde::de::Error::custom(format!("total_budget: {e} (or \"auto\")")))
            }
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    pub total_budget: TotalBudget,
    pub safety_margin: ByteSize,
    pub eviction_min_idle: HumanDuration,
    /// The part of the budget only urgent partitions (priority high and
    /// critical: the PoSt kinds) may use, so one never waits for a normal
    /// partition to be proved (a WinningPoSt partition needs ~0.2 GiB); at
    /// most an eighth of the budget is kept so.
    pub urgent_reserve: ByteSize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self {
            total_budget: TotalBudget::Auto,
            safety_margin: ByteSize(5 << 30),
            eviction_min_idle: HumanDuration(Duration::from_secs(300)),
            urgent_reserve: ByteSize(1 << 30),
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
    /// Prover workers per device beyond gpu_workers_per_device that prove
    /// only partitions of urgent jobs (priority high and critical), so one
    /// never waits for a normal partition's proving to find a worker.
    pub urgent_workers_per_device: usize,
    /// Caps the VRAM budget the process tracks per device (e.g. "16GiB" to
    /// act like a small card); 0 = the device's own memory.
    pub vram_limit: ByteSize,
    /// The part of each device's VRAM budget only urgent partitions
    /// (priority high and critical: the PoSt kinds) may use, as
    /// `memory.urgent_reserve` of the host budget: one whose working set
    /// fits it (a WinningPoSt partition needs ~0.5 GiB) computes beside
    /// the partition holding the GPU instead of after it. At most an
    /// eighth of the budget is kept so; 0 = none.
    pub urgent_vram_reserve: ByteSize,
    /// When the last GPU in service is lost, prove its work and what
    /// follows on the CPU instead of failing it.
    pub cpu_fallback: bool,
}

impl Default for GpuConfig {
    fn default() -> Self {
        Self {
            devices: Vec::new(),
            gpu_threads: 0,
            gpu_workers_per_device: 2,
            urgent_workers_per_device: 1,
            vram_limit: ByteSize(0),
            urgent_vram_reserve: ByteSize(1 << 30),
            cpu_fallback: false,
        }
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
        Self { max_batch_size: 1, max_batch_wait_ms: 10_000, sort_by_type: true }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SynthesisConfig {
    /// CPU threads for synthesis; 0 = all CPUs.
    pub threads: usize,
    /// Partitions synthesized at once (one thread each); 0 = `threads`.
    pub partition_workers: usize,
    /// Threads beyond partition_workers that synthesize only partitions of
    /// urgent jobs (priority high and critical: the PoSt kinds), so they
    /// start at once while long PoRep partitions occupy the others. 0 =
    /// none, and no dispatcher of their own for urgent jobs (they then
    /// wait for a partition worker and a synthesis permit).
    pub urgent_workers: usize,
    /// Synthesize through each circuit's pre-compiled constraint system
    /// (witness-only synthesis + sparse products; recorded at first use
    /// or loaded from `<param_cache>/<circuit-id>.pce`).
    pub pce: bool,
    /// How much nicer (0-19, Unix niceness) the partition workers run than
    /// the daemon, and every thread they start (witness generation, the
    /// sparse products on all cores). The prover workers' host steps that
    /// feed the GPU (copying a, b, c to it, compacting scalars) keep the
    /// daemon's priority, and so do the urgent-only synthesis workers: at
    /// equal priority, several all-core synthesis loops leave those steps
    /// a fraction of the CPU while the GPU waits for them. 0: all alike.
    pub nice: u8,
}

impl Default for SynthesisConfig {
    fn default() -> Self {
        Self { threads: 0, partition_workers: 0, urgent_workers: 2, pce: true, nice: 10 }
    }
}

/// A count, or `"auto"` (None): the engine chooses.
fn auto_or_count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Int(usize),
        Str(String),
    }
    match Raw::deserialize(d)? {
        Raw::Int(n) => Ok(Some(n)),
        Raw::Str(s) if s.trim().eq_ignore_ascii_case("auto") => Ok(None),
        Raw::Str(s) => Err(serde::de::Error::custom(format!("{s:?} is not a count or \"auto\""))),
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct PipelineConfig {
    /// Overlap synthesis of the next batch with proving of the current one.
    pub enabled: bool,
    /// Synthesized partitions that may wait for a prover.
    pub synthesis_lookahead: usize,
    /// Batches in synthesis at once; None (`"auto"` or unset): one per
    /// device the engine proves on ([`Config::synthesis_concurrency_for`]).
    #[serde(deserialize_with = "auto_or_count")]
    pub synthesis_concurrency: Option<usize>,
    /// Urgent batches in synthesis at once on their own dispatcher, beside
    /// `synthesis_concurrency` (when `synthesis.urgent_workers` > 0).
    pub urgent_synthesis_concurrency: usize,
    /// Compatibility key: when non-zero, replaces synthesis_lookahead.
    pub slot_size: usize,
    /// The existing daemon's cap on partitions synthesized at once: when
    /// non-zero and synthesis.partition_workers is 0, it is the number of
    /// partition workers.
    pub max_parallel_synthesis: usize,
    /// The existing daemon's target of synthesized partitions waiting for
    /// the GPU: when non-zero, the waiting queue's capacity (before
    /// slot_size and synthesis_lookahead).
    pub max_gpu_queue_depth: usize,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            synthesis_lookahead: 1,
            synthesis_concurrency: None,
            urgent_synthesis_concurrency: 2,
            slot_size: 0,
            max_parallel_synthesis: 0,
            max_gpu_queue_depth: 0,
        }
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

/// A config read from a file or text, and the warnings about it (what was
/// ignored or replaced, naming the key), to log once logging is set up.
#[derive(Debug)]
pub struct Loaded {
    pub config: Config,
    pub warnings: Vec<String>,
}

impl Config {
    /// Reads and validates a config file, returning the warnings.
    pub fn read(path: &Path) -> Result<Loaded, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.into(), source })?;
        Self::parse(&text)
    }

    /// Parses and validates TOML text, returning the warnings.
    pub fn parse(text: &str) -> Result<Loaded, ConfigError> {
        let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| ConfigError::Syntax(e.to_string()))?;
        let warnings = compat::normalize(&mut table)?;
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
        Ok(Loaded { config, warnings })
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
        if self.pipeline.synthesis_concurrency == Some(0) {
            return bad("pipeline.synthesis_concurrency", "must be at least 1");
        }
        if self.pipeline.urgent_synthesis_concurrency == 0 {
            return bad(
                "pipeline.urgent_synthesis_concurrency",
                "must be at least 1 (synthesis.urgent_workers = 0 turns the urgent lane off)",
            );
        }
        if self.synthesis.nice > MAX_NICE {
            return bad("synthesis.nice", &format!("{} is above {MAX_NICE}, the nicest a thread can be", self.synthesis.nice));
        }
        if self.daemon.max_waiting_calls == 0 {
            return bad("daemon.max_waiting_calls", "must be at least 1");
        }
        if !matches!(self.daemon.shutdown.as_str(), "drain" | "cancel") {
            return bad("daemon.shutdown", &format!("{:?} is not \"drain\" or \"cancel\"", self.daemon.shutdown));
        }
        if !matches!(self.logging.format.as_str(), "human" | "json") {
            return bad("logging.format", &format!("{:?} is not \"human\" or \"json\"", self.logging.format));
        }
        if let Err(e) = valid_log_filter(&self.logging.level) {
            return bad("logging.level", &format!("{:?}: {e}", self.logging.level));
        }
        if self.daemon.socket_mode.0 & 0o600 != 0o600 {
            return bad("daemon.socket_mode", &format!("{:o} does not let the owner read and write the socket", self.daemon.socket_mode.0));
        }
        if self.srs.stream_slice.0 == 0 {
            return bad("srs.stream_slice", "must be more than 0 bytes");
        }
        if let TotalBudget::Bytes(0) = self.memory.total_budget {
            return bad("memory.total_budget", "must be more than 0 bytes");
        }
        Ok(())
    }

    /// CPU threads for synthesis (`synthesis.threads`, 0 = all CPUs).
    pub fn synthesis_threads(&self) -> usize {
        match self.synthesis.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }

    /// Partition synthesis threads after resolving the 0 = auto settings.
    pub fn partition_workers(&self) -> usize {
        self.partition_workers_on(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    /// [`Self::partition_workers`] on a host of `cpus` CPUs.
    pub fn partition_workers_on(&self, cpus: usize) -> usize {
        let threads = match self.synthesis.threads {
            0 => cpus,
            n => n,
        };
        [self.synthesis.partition_workers, self.pipeline.max_parallel_synthesis, threads].into_iter().find(|&n| n > 0).unwrap_or(1)
    }

    /// Batches in synthesis at once on an engine proving on `devices`
    /// devices: `pipeline.synthesis_concurrency` where set, else one per
    /// device. A batch's partitions synthesize side by side (a 32 GiB
    /// PoRep's 10 in 2.5-3.5 s, one core each), and the next batch starts
    /// once they are done: one batch at a time feeds at most ~10 partitions
    /// per 3 s, what four or five GPUs prove (1.3-1.7 s a partition).
    /// Beyond, the GPUs would wait for synthesis with cores to spare. One
    /// batch per device gives each device the share one GPU has alone; the
    /// partition workers (one per core) and the memory budget still bound
    /// the partitions synthesized at once.
    pub fn synthesis_concurrency_for(&self, devices: usize) -> usize {
        self.pipeline.synthesis_concurrency.unwrap_or(devices.max(1))
    }

    /// Capacity of the queue of synthesized partitions waiting for a prover.
    pub fn gpu_queue_capacity(&self) -> usize {
        let p = &self.pipeline;
        [p.max_gpu_queue_depth, p.slot_size, p.synthesis_lookahead].into_iter().find(|&n| n > 0).unwrap_or(1)
    }
}

/// The largest Unix niceness (`synthesis.nice`).
pub const MAX_NICE: u8 = 19;

/// A log filter as `[logging] level` and `--log-level` take it: a level,
/// or comma-separated directives `level` / `target=level`
/// ("info,cuzk_core=debug").
pub fn valid_log_filter(filter: &str) -> Result<(), String> {
    const LEVELS: &str = "off, error, warn, info, debug, trace";
    let mut any = false;
    for d in filter.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        any = true;
        let (target, level) = d.rsplit_once('=').map_or((None, d), |(t, l)| (Some(t.trim()), l.trim()));
        if level.parse::<log::LevelFilter>().is_err() {
            return Err(format!("{level:?} is not a level ({LEVELS})"));
        }
        if target.is_some_and(|t| t.is_empty() || !t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':' || c == '-')) {
            return Err(format!("{d:?} is not target=level (a module path such as cuzk_core::engine)"));
        }
    }
    if any {
        Ok(())
    } else {
        Err(format!("empty: give a level ({LEVELS}) or directives such as \"info,cuzk_core=debug\""))
    }
}

#[cfg(test)]
mod tests;
