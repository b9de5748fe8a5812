//! Human-friendly sizes ("256GiB", "5GiB", "512MB", or a plain byte count),
//! durations ("5m", "30s", "1h30m", "250ms") and file modes (0o660 or
//! "0660") as config values.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::time::Duration;

/// A byte count, written in TOML as an integer or a string with a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

/// A duration, written in TOML as a string like "5m" or an integer of seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HumanDuration(pub Duration);

/// Unix permission bits, written in TOML as an octal integer (0o660) or
/// an octal string ("0660", "660").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileMode(pub u32);

const SIZE_UNITS: &[(&str, u64)] = &[
    ("b", 1),
    ("kib", 1 << 10),
    ("mib", 1 << 20),
    ("gib", 1 << 30),
    ("tib", 1 << 40),
    ("kb", 1_000),
    ("mb", 1_000_000),
    ("gb", 1_000_000_000),
    ("tb", 1_000_000_000_000),
];

/// Parses "256GiB", "1.5 GiB", "512MB", "1024" (bytes).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(t.len());
    let (num, unit) = (t[..split].replace('_', ""), t[split..].trim().to_ascii_lowercase());
    if num.is_empty() {
        return Err(format!("invalid size {s:?}: expected a number with an optional unit, like \"256GiB\""));
    }
    let mult = match SIZE_UNITS.iter().find(|(u, _)| *u == unit) {
        Some((_, m)) => *m,
        None if unit.is_empty() => 1,
        None => {
            return Err(format!("invalid size {s:?}: unknown unit {:?} (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)", &t[split..].trim()))
        }
    };
    let value: f64 = num.parse().map_err(|_| format!("invalid size {s:?}: {num:?} is not a number"))?;
    let bytes = value * mult as f64;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(format!("invalid size {s:?}: too large"));
    }
    Ok(bytes.round() as u64)
}

/// Parses "5m", "30s", "1h30m", "250ms", "2d"; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("invalid duration \"\": expected e.g. \"5m\", \"30s\", \"1h30m\"".into());
    }
    if let Ok(secs) = t.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let mut total = Duration::ZERO;
    let mut rest = t;
    while !rest.is_empty() {
        let n_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let u_end = rest[n_end..].find(|c: char| c.is_ascii_digit()).map_or(rest.len(), |i| n_end + i);
        let (num, unit) = (&rest[..n_end], rest[n_end..u_end].trim());
        let value: f64 = num.parse().map_err(|_| format!("invalid duration {s:?}: {num:?} is not a number"))?;
        let secs = match unit {
            "ms" => value / 1000.0,
            "s" => value,
            "m" => value * 60.0,
            "h" => value * 3600.0,
            "d" => value * 86400.0,
            "" => return Err(format!("invalid duration {s:?}: {num:?} has no unit (use ms, s, m, h or d)")),
            other => return Err(format!("invalid duration {s:?}: unknown unit {other:?} (use ms, s, m, h or d)")),
        };
        total += Duration::from_secs_f64(secs);
        rest = &rest[u_end..];
    }
    Ok(total)
}

/// Formats bytes with the largest binary unit that keeps it readable.
pub fn format_size(bytes: u64) -> String {
    for (unit, m) in [("TiB", 1u64 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if bytes >= m {
            let v = bytes as f64 / m as f64;
            return if bytes.is_multiple_of(m) { format!("{}{unit}", bytes / m) } else { format!("{v:.2}{unit}") };
        }
    }
    format!("{bytes}B")
}

struct SizeVisitor;

impl Visitor<'_> for SizeVisitor {
    type Value = ByteSize;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a size such as \"256GiB\" or a byte count")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ByteSize, E> {
        u64::try_from(v).map(ByteSize).map_err(|_| E::custom(format!("invalid size {v}: must not be negative")))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<ByteSize, E> {
        Ok(ByteSize(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<ByteSize, E> {
        parse_size(v).map(ByteSize).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SizeVisitor)
    }
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_size(self.0))
    }
}

struct DurationVisitor;

impl Visitor<'_> for DurationVisitor {
    type Value = HumanDuration;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a duration such as \"5m\" or a number of seconds")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<HumanDuration, E> {
        u64::try_from(v)
            .map(|s| HumanDuration(Duration::from_secs(s)))
            .map_err(|_| E::custom(format!("invalid duration {v}: must not be negative")))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<HumanDuration, E> {
        Ok(HumanDuration(Duration::from_secs(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<HumanDuration, E> {
        parse_duration(v).map(HumanDuration).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for HumanDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DurationVisitor)
    }
}

impl Serialize for HumanDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}ms", self.0.as_millis()))
    }
}

struct ModeVisitor;

impl Visitor<'_> for ModeVisitor {
    type Value = FileMode;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("permission bits such as 0o660 or \"0660\"")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<FileMode, E> {
        match u32::try_from(v) {
            Ok(m) if m <= 0o777 => Ok(FileMode(m)),
            _ => Err(E::custom(format!("invalid mode {v:#o}: permission bits are 0o000-0o777"))),
        }
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<FileMode, E> {
        self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<FileMode, E> {
        let t = v.trim().trim_start_matches("0o");
        match u32::from_str_radix(t, 8) {
            Ok(m) if m <= 0o777 && !t.is_empty() => Ok(FileMode(m)),
            _ => Err(E::custom(format!("invalid mode {v:?}: octal permission bits such as \"0660\""))),
        }
    }
}

impl<'de> Deserialize<'de> for FileMode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ModeVisitor)
    }
}

impl Serialize for FileMode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{:04o}", self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("256GiB").unwrap(), 256 << 30);
        assert_eq!(parse_size("5 GiB").unwrap(), 5 << 30);
        assert_eq!(parse_size("1.5KiB").unwrap(), 1536);
        assert_eq!(parse_size("512MB").unwrap(), 512_000_000);
        assert_eq!(parse_size("1024").unwrap(), 1024);
        assert!(parse_size("12XB").unwrap_err().contains("unknown unit \"XB\""));
        assert!(parse_size("GiB").unwrap_err().contains("expected a number"));
        assert_eq!(format_size(5 << 30), "5GiB");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert!(parse_duration("5x").unwrap_err().contains("unknown unit \"x\""));
        assert!(parse_duration("5m3").unwrap_err().contains("no unit"));
    }
}
