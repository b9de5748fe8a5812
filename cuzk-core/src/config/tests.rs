use super::*;

#[test]
fn empty_config_is_all_defaults() {
    let c = Config::from_toml("").unwrap();
    assert_eq!(c.memory.total_budget, TotalBudget::Auto);
    assert_eq!(c.memory.safety_margin, ByteSize(5 << 30));
    assert_eq!(c.memory.eviction_min_idle, HumanDuration(Duration::from_secs(300)));
    assert_eq!(c.gpus.gpu_workers_per_device, 2);
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
    Config::from_toml(text).unwrap();
}

#[test]
fn unknown_key_names_section_and_key() {
    let e = Config::from_toml("[memory]\ntotal_budget = \"auto\"\nmax_ram = 5\n").unwrap_err().to_string();
    assert!(e.contains("`max_ram`") && e.contains("[memory]"), "{e}");
    let e = Config::from_toml("[gpu]\ndevices = []\n").unwrap_err().to_string();
    assert!(e.contains("[gpu]"), "{e}");
    let e = Config::from_toml("listen = \"x\"\n").unwrap_err().to_string();
    assert!(e.contains("[listen]"), "{e}");
}

#[test]
fn deprecated_keys_are_accepted() {
    let c = Config::from_toml(
        "[srs]\npreload = [\"a\"]\n[memory]\npinned_budget = \"10GiB\"\nworking_memory_budget = \"1GiB\"\ntotal_budget = \"256GiB\"\n",
    )
    .unwrap();
    assert_eq!(c.memory.total_budget, TotalBudget::Bytes(256 << 30));
}

#[test]
fn bad_values_are_explained() {
    let e = Config::from_toml("[memory]\nsafety_margin = \"5 GB B\"\n").unwrap_err().to_string();
    assert!(e.contains("[memory]") && e.contains("unknown unit"), "{e}");
    let e = Config::from_toml("[memory]\neviction_min_idle = \"5 minutes\"\n").unwrap_err().to_string();
    assert!(e.contains("unknown unit"), "{e}");
    let e = Config::from_toml("[memory]\ntotal_budget = \"lots\"\n").unwrap_err().to_string();
    assert!(e.contains("total_budget") && e.contains("auto"), "{e}");
    let e = Config::from_toml("[gpus]\ngpu_workers_per_device = 0\n").unwrap_err().to_string();
    assert!(e.contains("gpus.gpu_workers_per_device"), "{e}");
    let e = Config::from_toml("[logging]\nformat = \"xml\"\n").unwrap_err().to_string();
    assert!(e.contains("logging.format"), "{e}");
    let e = Config::from_toml("[scheduler]\nmax_batch_size = \"two\"\n").unwrap_err().to_string();
    assert!(e.contains("[scheduler]"), "{e}");
    let e = Config::from_toml("[memory\n").unwrap_err().to_string();
    assert!(e.contains("TOML"), "{e}");
}
