use super::*;

/// The config of `text`, its warnings dropped.
fn load(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text).map(|l| l.config)
}

#[test]
fn empty_config_is_all_defaults() {
    let c = load("").unwrap();
    assert_eq!(c.memory.total_budget, TotalBudget::Auto);
    assert_eq!(c.memory.safety_margin, ByteSize(5 << 30));
    assert_eq!(c.memory.eviction_min_idle, HumanDuration(Duration::from_secs(300)));
    assert_eq!(c.gpus.gpu_workers_per_device, 2);
    // Capacity kept for urgent jobs, on without operator action.
    assert_eq!((c.synthesis.urgent_workers, c.gpus.urgent_workers_per_device, c.memory.urgent_reserve), (2, 1, ByteSize(1 << 30)));
    assert_eq!(c.pipeline.urgent_synthesis_concurrency, 2);
    assert_eq!(c.synthesis.nice, 10);
    assert_eq!(c.scheduler.max_batch_size, 1);
    assert_eq!(c.scheduler.max_batch_wait_ms, 10_000);
    assert!(c.pipeline.enabled);
    assert_eq!(c.logging.format, "human");
}

#[test]
fn example_config_parses_and_sets_every_key() {
    let text = include_str!("../../../configs/cuzk.example.toml");
    let table: toml::Table = text.parse().unwrap();
    for (section, keys) in KEYS {
        let t = table.get(*section).and_then(|v| v.as_table()).unwrap_or_else(|| panic!("example lacks [{section}]"));
        for key in *keys {
            assert!(t.contains_key(*key), "example config does not show {section}.{key}");
        }
    }
    // Every value the default but the address: TCP port 9820 on loopback,
    // where Curio's documented `Address = "127.0.0.1:9820"` points.
    let mut c = load(text).unwrap();
    assert_eq!(c.daemon.listen, "127.0.0.1:9820");
    c.daemon.listen = Config::default().daemon.listen;
    assert_eq!(toml::Value::try_from(&c).unwrap(), toml::Value::try_from(Config::default()).unwrap());
}

/// Every one of `wants` is in some warning.
fn assert_warned(loaded: &Loaded, wants: &[&str]) {
    let w = loaded.warnings.join("\n");
    for want in wants {
        assert!(w.contains(want), "no warning {want:?} in:\n{w}");
    }
}

const STRICT: &str = "[daemon]\nstrict_config = true\n";

#[test]
fn unknown_keys_warn_naming_each_or_fail_when_strict() {
    let text = "[memory]\ntotal_budget = \"auto\"\nmax_ram = 5\nmin_ram = 1\n[gpu]\ndevices = []\n";
    let loaded = Config::parse(text).unwrap();
    let w = loaded.warnings.join("\n");
    assert!(w.contains("memory.max_ram") && w.contains("memory.min_ram") && w.contains("[gpu]"), "{w}");
    assert_eq!(loaded.warnings.len(), 3, "{w}");

    let e = load(&format!("{STRICT}[memory]\ntotal_budget = \"auto\"\nmax_ram = 5\n")).unwrap_err().to_string();
    assert!(e.contains("`max_ram`") && e.contains("[memory]") && e.contains("strict_config"), "{e}");
    let e = load(&format!("{STRICT}[gpu]\ndevices = []\n")).unwrap_err().to_string();
    assert!(e.contains("[gpu]"), "{e}");
    let e = load(&format!("listen = \"x\"\n{STRICT}")).unwrap_err().to_string();
    assert!(e.contains("[listen]"), "{e}");
    let e = load("[daemon]\nstrict_config = \"yes\"\n").unwrap_err().to_string();
    assert!(e.contains("strict_config"), "{e}");
}

#[test]
fn upstream_defaults() {
    let c = Config::default();
    assert_eq!(c.daemon.listen, "unix:///run/curio/cuzk.sock");
    assert_eq!(c.srs.param_cache, std::path::PathBuf::from("/data/zk/params"));
    assert!(!c.daemon.strict_config);
}

/// The existing daemon's keys and values (see the file's header).
const UPSTREAM_KEYS: &str = include_str!("../../../tests/data/upstream-cuzk.toml");

#[test]
fn upstream_config_keeps_its_meaning() {
    let loaded = Config::parse(UPSTREAM_KEYS).unwrap();
    let c = &loaded.config;
    assert_eq!(c.daemon.listen, "0.0.0.0:9820");
    assert_eq!(c.daemon.status_listen, "0.0.0.0:9821");
    assert_eq!(c.gpus.gpu_threads, 32);
    assert!(c.scheduler.sort_by_type);
    assert_eq!(c.memory.total_budget, TotalBudget::Bytes(4 << 30));
    assert_eq!((c.logging.format.as_str(), c.logging.level.as_str()), ("human", "info,cuzk_core=debug"));
    // partition_workers (ours, and the existing daemon's deprecated key)
    // wins over max_parallel_synthesis; the GPU queue target over slot_size.
    assert_eq!(c.partition_workers(), 12);
    assert_eq!(c.gpu_queue_capacity(), 8);
    assert_warned(
        &loaded,
        &[
            "srs.preload",
            "memory.pinned_budget",
            "memory.working_memory_budget",
            "max_parallel_synthesis = 18",
            "daemon.key_from_a_newer_version",
            "[vast_manager]",
            "logging.format = \"pretty\"",
            "memory.total_budget = \"4G\": used 4GiB",
        ],
    );
    // Without partition_workers, max_parallel_synthesis caps the workers.
    let c = load("[pipeline]\nmax_parallel_synthesis = 3\nslot_size = 2\n").unwrap();
    assert_eq!((c.partition_workers(), c.gpu_queue_capacity()), (3, 2));
}

/// Where the same config synthesizes a different number of partitions at
/// once than the existing daemon on the same host, a warning says so.
#[test]
fn tuning_that_differs_from_the_existing_daemon_is_named() {
    let notes = |text: &str, cpus: usize| upstream_tuning_notes(&load(text).unwrap(), cpus).join("\n");
    // partition_workers: honoured here, ignored there (which used 18).
    let n = notes("[synthesis]\npartition_workers = 4\n", 64);
    assert!(n.contains("synthesis.partition_workers = 4: 4 partitions") && n.contains("up to 18"), "{n}");
    let n = notes("[synthesis]\npartition_workers = 4\n[pipeline]\nmax_parallel_synthesis = 6\n", 64);
    assert!(n.contains("4 partitions") && n.contains("up to 6"), "{n}");
    assert_eq!(notes("[synthesis]\npartition_workers = 18\n", 64), "");
    // Defaults: one worker per CPU here, at most 18 there.
    let n = notes("", 64);
    assert!(n.contains("max_parallel_synthesis not set: 64 partitions") && n.contains("max_parallel_synthesis = 18"), "{n}");
    let n = notes("[synthesis]\nthreads = 24\n", 64);
    assert!(n.contains("24 partitions"), "{n}");
    for (text, cpus) in [("", 16), ("", 18), ("[synthesis]\nthreads = 8\n", 64), ("[pipeline]\nmax_parallel_synthesis = 10\n", 64)] {
        assert_eq!(notes(text, cpus), "", "{text:?} on {cpus} CPUs");
    }
    // 1: the existing daemon ran at least 2.
    let n = notes("[pipeline]\nmax_parallel_synthesis = 1\n", 64);
    assert!(n.contains("max_parallel_synthesis = 1: 1 partition") && n.contains("at least 2"), "{n}");
    // The example config is the defaults: the same note as no file.
    assert_eq!(notes(include_str!("../../../configs/cuzk.example.toml"), 64), notes("", 64));
}

#[test]
fn synthesis_concurrency_is_one_batch_per_device_unless_set() {
    let c = Config::default();
    assert_eq!(c.pipeline.synthesis_concurrency, None);
    assert_eq!([1, 2, 8].map(|d| c.synthesis_concurrency_for(d)), [1, 2, 8]);
    assert_eq!(c.synthesis_concurrency_for(0), 1, "at least one batch");
    let c = load("[pipeline]\nsynthesis_concurrency = 3\n").unwrap();
    assert_eq!([1, 2, 8].map(|d| c.synthesis_concurrency_for(d)), [3, 3, 3], "a value in the config wins");
    let c = load("[pipeline]\nsynthesis_concurrency = 0\n").unwrap();
    assert_eq!(c.synthesis_concurrency_for(4), 1, "0 is raised to 1, as by the existing daemon");
    let c = load(include_str!("../../../configs/cuzk.example.toml")).unwrap();
    assert_eq!(c.synthesis_concurrency_for(4), 4, "the example config leaves it to the devices");
    assert_eq!(load("[pipeline]\nsynthesis_concurrency = \"Auto\"\n").unwrap().pipeline.synthesis_concurrency, None);
    let e = load("[pipeline]\nsynthesis_concurrency = \"many\"\n").unwrap_err().to_string();
    assert!(e.contains("[pipeline]") && e.contains("\"many\" is not a count or \"auto\""), "{e}");
}

#[test]
fn lenient_values_are_used_and_reported() {
    let text = "[memory]\ntotal_budget = \"400G\"\nsafety_margin = \"lots\"\neviction_min_idle = \"soon\"\n\
                [gpus]\ngpu_workers_per_device = 0\n[scheduler]\nmax_batch_size = 0\n\
                [pipeline]\nsynthesis_concurrency = 0\n[logging]\nformat = \"pretty\"\nlevel = \"verbose\"\n";
    let loaded = Config::parse(text).unwrap();
    let c = &loaded.config;
    assert_eq!(c.memory.total_budget, TotalBudget::Bytes(400 << 30));
    assert_eq!(c.memory.safety_margin, ByteSize(5 << 30));
    assert_eq!(c.memory.eviction_min_idle, HumanDuration(Duration::from_secs(300)));
    assert_eq!((c.gpus.gpu_workers_per_device, c.scheduler.max_batch_size, c.pipeline.synthesis_concurrency), (1, 1, Some(1)));
    assert_eq!((c.logging.format.as_str(), c.logging.level.as_str()), ("human", "info"));
    assert_warned(
        &loaded,
        &[
            "memory.total_budget = \"400G\": used 400GiB",
            "memory.safety_margin = \"lots\" is not a size: used the default \"5GiB\"",
            "memory.eviction_min_idle = \"soon\"",
            "gpus.gpu_workers_per_device = 0: used 1",
            "scheduler.max_batch_size = 0: used 1",
            "pipeline.synthesis_concurrency = 0: used 1",
            "logging.format = \"pretty\"",
            "logging.level = \"verbose\"",
        ],
    );
    let loaded = Config::parse("[synthesis]\nnice = 25\n").unwrap();
    assert_eq!(loaded.config.synthesis.nice, 19);
    assert_warned(&loaded, &["synthesis.nice = 25: used 19"]);
}

#[test]
fn log_filters_take_directives() {
    for ok in ["info", "off", "info,cuzk_core=debug", "warn, cuzk_core::engine=trace", "cuzk-bin=info"] {
        assert!(valid_log_filter(ok).is_ok(), "{ok}");
        assert_eq!(load(&format!("[logging]\nlevel = {ok:?}\n")).unwrap().logging.level, ok);
    }
    for bad in ["loud", "", "info,=debug", "cuzk=loud", "a b=info"] {
        assert!(valid_log_filter(bad).is_err(), "{bad}");
    }
}

#[test]
fn deprecated_keys_are_accepted() {
    let c = load(
        "[srs]\npreload = [\"a\"]\n[memory]\npinned_budget = \"10GiB\"\nworking_memory_budget = \"1GiB\"\ntotal_budget = \"256GiB\"\n",
    )
    .unwrap();
    assert_eq!(c.memory.total_budget, TotalBudget::Bytes(256 << 30));
}

#[test]
fn bad_values_are_explained_when_strict() {
    let strict = |t: &str| load(&format!("{STRICT}{t}")).unwrap_err().to_string();
    let e = strict("[memory]\nsafety_margin = \"5 GB B\"\n");
    assert!(e.contains("[memory]") && e.contains("unknown unit"), "{e}");
    let e = strict("[memory]\neviction_min_idle = \"5 minutes\"\n");
    assert!(e.contains("unknown unit"), "{e}");
    let e = strict("[memory]\ntotal_budget = \"lots\"\n");
    assert!(e.contains("total_budget") && e.contains("auto"), "{e}");
    let e = strict("[logging]\nformat = \"xml\"\n");
    assert!(e.contains("logging.format"), "{e}");
    let e = strict("[synthesis]\nnice = 20\n");
    assert!(e.contains("synthesis.nice") && e.contains("19"), "{e}");
    let e = strict("[logging]\nlevel = \"loud\"\n");
    assert!(e.contains("logging.level"), "{e}");
    for key in [
        "[gpus]\ngpu_workers_per_device",
        "[scheduler]\nmax_batch_size",
        "[pipeline]\nsynthesis_concurrency",
        "[pipeline]\nurgent_synthesis_concurrency",
    ] {
        let e = strict(&format!("{key} = 0\n"));
        assert!(e.contains(&key.replace("]\n", ".")[1..]) && e.contains("at least 1"), "{e}");
    }
    let mut c = Config::default();
    c.gpus.gpu_workers_per_device = 0;
    assert!(c.validate().unwrap_err().to_string().contains("gpus.gpu_workers_per_device"));
    let e = load("[scheduler]\nmax_batch_size = \"two\"\n").unwrap_err().to_string();
    assert!(e.contains("[scheduler]"), "{e}");
    let e = load("[memory\n").unwrap_err().to_string();
    assert!(e.contains("TOML"), "{e}");
}

#[test]
fn socket_mode_and_shutdown_timeout() {
    let c = Config::default();
    assert_eq!((c.daemon.socket_mode, c.daemon.shutdown_timeout), (FileMode(0o660), HumanDuration(Duration::from_secs(60))));
    for text in ["socket_mode = 0o600", "socket_mode = \"0600\"", "socket_mode = \"600\""] {
        assert_eq!(load(&format!("[daemon]\n{text}\n")).unwrap().daemon.socket_mode, FileMode(0o600), "{text}");
    }
    for (text, want) in
        [("socket_mode = \"rw\"", "invalid mode"), ("socket_mode = 0o1777", "0o000-0o777"), ("socket_mode = 0o060", "owner")]
    {
        let e = load(&format!("[daemon]\n{text}\n")).unwrap_err().to_string();
        assert!(e.contains(want), "{text}: {e}");
    }
    let c = load("[daemon]\nshutdown_timeout = \"30s\"\n").unwrap();
    assert_eq!(c.daemon.shutdown_timeout, HumanDuration(Duration::from_secs(30)));
}

#[test]
fn urgent_vram_reserve_is_a_size_capped_per_device_at_start() {
    assert_eq!(load("").unwrap().gpus.urgent_vram_reserve, ByteSize(1 << 30), "on by default");
    assert_eq!(load("[gpus]\nurgent_vram_reserve = \"512MiB\"\n").unwrap().gpus.urgent_vram_reserve, ByteSize(512 << 20));
    assert_eq!(load("[gpus]\nurgent_vram_reserve = 0\n").unwrap().gpus.urgent_vram_reserve, ByteSize(0), "0: none");
    // Over an eighth of a device's budget is accepted here: the budget is
    // known at start, where each device keeps at most an eighth of its own
    // (`VramBudget::with_urgent_reserve`).
    let c = load("[gpus]\nvram_limit = \"16GiB\"\nurgent_vram_reserve = \"64GiB\"\n").unwrap();
    assert_eq!(c.gpus.urgent_vram_reserve, ByteSize(64 << 30));
    let capped = crate::engine::interlock::VramBudget::with_urgent_reserve(c.gpus.vram_limit.0, c.gpus.urgent_vram_reserve.0);
    assert_eq!(capped.urgent_reserve(), 2 << 30);
    let e = load("[gpus]\nurgent_vram_reserve = \"lots\"\n").unwrap_err().to_string();
    assert!(e.contains("[gpus]") && e.contains("urgent_vram_reserve = \"lots\"") && e.contains("invalid size"), "{e}");
    let e = load("[memory]\nurgent_reserve = \"1 GB B\"\n").unwrap_err().to_string();
    assert!(e.contains("[memory]") && e.contains("urgent_reserve = \"1 GB B\""), "{e}");
}
