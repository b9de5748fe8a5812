//! The first pass over a config file's TOML table, before serde fills the
//! typed sections: every file the existing cuzk daemon accepts must start
//! ours with the same meaning, so what it ignored or silently replaced is
//! accepted here and reported (key, value given, value used) instead of
//! refusing to start. `daemon.strict_config = true` turns unknown sections
//! and keys, values that do not parse and counts of 0 back into errors.

use super::{parse_duration, parse_size, valid_log_filter, Config, ConfigError, DEPRECATED, KEYS};
use toml::{Table, Value};

/// Size keys: a value that does not parse is replaced by the default.
const SIZE_KEYS: &[(&str, &str)] = &[("memory", "total_budget"), ("memory", "safety_margin"), ("gpus", "vram_limit")];
/// Size keys of ours alone (the existing daemon never read them, so no
/// file of its relies on a fallback): a value that does not parse is an
/// error naming the key.
const OWN_SIZE_KEYS: &[(&str, &str)] = &[("memory", "urgent_reserve"), ("gpus", "urgent_vram_reserve")];
const DURATION_KEYS: &[(&str, &str)] = &[("memory", "eviction_min_idle")];
/// Counts the existing daemon raises to 1 when they are 0 (an error under
/// strict_config: validation names them).
const AT_LEAST_ONE: &[(&str, &str)] =
    &[("gpus", "gpu_workers_per_device"), ("scheduler", "max_batch_size"), ("pipeline", "synthesis_concurrency")];

/// Normalises `table` in place; returns the warnings to log.
pub fn normalize(table: &mut Table) -> Result<Vec<String>, ConfigError> {
    let strict = match table.get("daemon").and_then(|d| d.get("strict_config")) {
        None => false,
        Some(Value::Boolean(b)) => *b,
        Some(v) => {
            return Err(ConfigError::Value { section: "daemon".into(), message: format!("strict_config = {v} is not true or false") })
        }
    };
    let mut notes = Vec::new();
    let sections: Vec<String> = table.keys().cloned().collect();
    for section in sections {
        let Some(known) = KEYS.iter().find(|(s, _)| *s == section).map(|(_, k)| *k) else {
            if strict {
                return Err(ConfigError::UnknownSection(section));
            }
            table.remove(&section);
            notes.push(format!("config: unknown section [{section}] ignored"));
            continue;
        };
        let keys = table.get_mut(&section).and_then(Value::as_table_mut).ok_or_else(|| ConfigError::NotATable(section.clone()))?;
        for (s, key, why) in DEPRECATED.iter().filter(|(s, ..)| *s == section) {
            if keys.remove(*key).is_some() {
                notes.push(format!("config key {s}.{key} is deprecated and ignored: {why}"));
            }
        }
        let unknown: Vec<String> = keys.keys().filter(|k| !known.contains(&k.as_str())).cloned().collect();
        for key in unknown {
            if strict {
                return Err(ConfigError::UnknownKey { section, key, known: known.join(", ") });
            }
            keys.remove(&key);
            notes.push(format!("config: unknown key {section}.{key} ignored (known keys in [{section}]: {})", known.join(", ")));
        }
    }
    lenient_values(table, strict, &mut notes);
    own_sizes(table)?;
    Ok(notes)
}

/// An error naming the first of [`OWN_SIZE_KEYS`] whose value is not a size.
fn own_sizes(table: &Table) -> Result<(), ConfigError> {
    for &(section, key) in OWN_SIZE_KEYS {
        if let Some(Value::String(given)) = get(table, section, key) {
            parse_size(&given).map_err(|e| ConfigError::Value { section: section.into(), message: format!("{key} = {given:?}: {e}") })?;
        }
    }
    Ok(())
}

/// Values the existing daemon accepted by falling back: sizes with a
/// one-letter unit or none it knows, durations it could not read, counts
/// of 0, log formats and filters it ignored.
fn lenient_values(table: &mut Table, strict: bool, notes: &mut Vec<String>) {
    let defaults = Value::try_from(Config::default()).expect("the default config serializes");
    let default_of = |section: &str, key: &str| defaults.get(section).and_then(|s| s.get(key)).map_or("?".into(), |v| v.to_string());
    for &(section, key) in SIZE_KEYS {
        let Some(Value::String(given)) = get(table, section, key) else { continue };
        if parse_size(&given).is_ok() || (key == "total_budget" && given.trim().eq_ignore_ascii_case("auto")) {
            continue;
        }
        if let Some(read) = one_letter_size(&given) {
            notes.push(format!("config {section}.{key} = {given:?}: used {read} (a one-letter unit is binary)"));
            set(table, section, key, Value::String(read));
        } else if !strict {
            notes.push(format!("config {section}.{key} = {given:?} is not a size: used the default {}", default_of(section, key)));
            remove(table, section, key);
        }
    }
    for &(section, key) in DURATION_KEYS {
        let Some(Value::String(given)) = get(table, section, key) else { continue };
        if parse_duration(&given).is_err() && !strict {
            notes.push(format!("config {section}.{key} = {given:?} is not a duration: used the default {}", default_of(section, key)));
            remove(table, section, key);
        }
    }
    for &(section, key) in AT_LEAST_ONE {
        if let (Some(Value::Integer(0)), false) = (get(table, section, key), strict) {
            notes.push(format!("config {section}.{key} = 0: used 1 (at least one)"));
            set(table, section, key, Value::Integer(1));
        }
    }
    if let Some(Value::String(given)) = get(table, "logging", "format") {
        if !matches!(given.as_str(), "human" | "json") && !strict {
            notes.push(format!("config logging.format = {given:?} is not \"human\" or \"json\": used \"human\""));
            remove(table, "logging", "format");
        }
    }
    if let Some(Value::String(given)) = get(table, "logging", "level") {
        if let Err(e) = valid_log_filter(&given) {
            if !strict {
                notes.push(format!("config logging.level = {given:?}: {e}: used \"info\""));
                remove(table, "logging", "level");
            }
        }
    }
    if let (Some(Value::Integer(given)), false) = (get(table, "synthesis", "nice"), strict) {
        let max = i64::from(super::MAX_NICE);
        if !(0..=max).contains(&given) {
            let used = given.clamp(0, max);
            notes.push(format!("config synthesis.nice = {given}: used {used} (0 to {max})"));
            set(table, "synthesis", "nice", Value::Integer(used));
        }
    }
    let workers = get(table, "synthesis", "partition_workers").and_then(|v| v.as_integer()).unwrap_or(0);
    let parallel = get(table, "pipeline", "max_parallel_synthesis").and_then(|v| v.as_integer()).unwrap_or(0);
    if workers > 0 && parallel > 0 && workers != parallel {
        notes.push(format!(
            "config pipeline.max_parallel_synthesis = {parallel} and synthesis.partition_workers = {workers}: used partition_workers"
        ));
    }
}

/// The existing daemon's cap on partitions synthesized at once when
/// `pipeline.max_parallel_synthesis` is 0 or not set.
pub const UPSTREAM_MAX_PARALLEL_SYNTHESIS: usize = 18;

/// Where the same config makes this host synthesize a different number of
/// partitions at once than the existing daemon would, one warning each
/// (logged at start, so an operator moving a config over sees it).
///
/// The existing daemon ignored `synthesis.partition_workers` (deprecated
/// there) and ran `max_parallel_synthesis` syntheses (18 when 0), at
/// least 2, as many as fit its memory budget. Here `partition_workers`
/// is honoured (the existing operator guide tunes it), and without it
/// `max_parallel_synthesis`, else one worker per synthesis thread (all
/// CPUs by default): each worker is one thread, and the memory budget
/// still bounds the partitions held, so idle cores are not left idle.
/// Only a difference in the caps is reported: where both run as many as
/// memory allows, the same config does the same. A host with fewer CPUs
/// than the existing cap runs one per CPU here without a warning (the
/// existing daemon's extra syntheses would share those CPUs).
pub fn upstream_tuning_notes(config: &Config, cpus: usize) -> Vec<String> {
    let (workers, parallel) = (config.synthesis.partition_workers, config.pipeline.max_parallel_synthesis);
    let ours = config.partition_workers_on(cpus);
    let upstream = match parallel {
        0 => UPSTREAM_MAX_PARALLEL_SYNTHESIS,
        n => n.max(2),
    };
    let mut notes = Vec::new();
    if workers > 0 && workers != upstream {
        notes.push(format!(
            "config synthesis.partition_workers = {workers}: {workers} partitions synthesized at once; \
             the existing daemon ignored this key and synthesized up to {upstream} \
             (pipeline.max_parallel_synthesis, {UPSTREAM_MAX_PARALLEL_SYNTHESIS} when 0 or not set)"
        ));
    } else if workers == 0 && parallel > 0 && ours != upstream {
        notes.push(format!(
            "config pipeline.max_parallel_synthesis = {parallel}: {ours} partition synthesized at once; the existing daemon ran at least {upstream}"
        ));
    } else if workers == 0 && parallel == 0 && ours > upstream {
        notes.push(format!(
            "config pipeline.max_parallel_synthesis not set: {ours} partitions synthesized at once (one per synthesis thread); \
             the existing daemon synthesized up to {upstream}: set pipeline.max_parallel_synthesis = {upstream} for its cap"
        ));
    }
    notes
}

/// "400G" → "400GiB": the existing daemon read sizes it could not parse
/// as 50 GiB; the operator meant the binary unit.
fn one_letter_size(s: &str) -> Option<String> {
    let t = s.trim();
    let unit = t.chars().last()?.to_ascii_uppercase();
    let num = t[..t.len() - 1].trim();
    let ok = matches!(unit, 'K' | 'M' | 'G' | 'T') && !num.is_empty() && num.parse::<f64>().is_ok_and(|v| v.is_finite() && v >= 0.0);
    ok.then(|| format!("{num}{unit}iB"))
}

fn get(table: &Table, section: &str, key: &str) -> Option<Value> {
    table.get(section)?.get(key).cloned()
}

fn set(table: &mut Table, section: &str, key: &str, v: Value) {
    if let Some(t) = table.get_mut(section).and_then(Value::as_table_mut) {
        t.insert(key.into(), v);
    }
}

fn remove(table: &mut Table, section: &str, key: &str) {
    if let Some(t) = table.get_mut(section).and_then(Value::as_table_mut) {
        t.remove(key);
    }
}
