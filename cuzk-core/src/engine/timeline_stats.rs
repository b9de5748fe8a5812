//! Turns a timeline (JSON lines, see [`super::timeline`]) into per-worker
//! and per-GPU busy fractions and gap statistics. Busy = between a
//! worker's `gpu_start` and `gpu_end`; the window runs from the first
//! `gpu_start` to the last `gpu_end`, so start-up synthesis is excluded.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::io::BufRead;

#[derive(Deserialize)]
struct Line {
    t_us: u64,
    ev: String,
    worker: Option<usize>,
    gpu: Option<u32>,
}

/// Idle gaps between busy intervals.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GapStats {
    pub count: usize,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub max_ms: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BusyStats {
    /// Worker id, or the GPU ordinal for per-GPU rows.
    pub id: u64,
    pub gpu: u32,
    pub proofs: usize,
    pub busy_ms: f64,
    pub busy_fraction: f64,
    pub gaps: GapStats,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimelineReport {
    pub window_ms: f64,
    pub synth_count: usize,
    pub synth_mean_ms: f64,
    pub workers: Vec<BusyStats>,
    /// Busy = any worker of the GPU computing.
    pub gpus: Vec<BusyStats>,
}

/// Merges overlapping intervals (sorted by start) into disjoint ones.
fn union(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

fn busy_stats(id: u64, gpu: u32, intervals: Vec<(u64, u64)>, window: (u64, u64)) -> BusyStats {
    let proofs = intervals.len();
    let merged = union(intervals);
    let busy_us: u64 = merged.iter().map(|(s, e)| e - s).sum();
    let mut gaps: Vec<f64> = merged.windows(2).map(|w| (w[1].0 - w[0].1) as f64 / 1000.0).collect();
    gaps.sort_by(|a, b| a.total_cmp(b));
    let span = (window.1 - window.0).max(1) as f64;
    BusyStats {
        id,
        gpu,
        proofs,
        busy_ms: busy_us as f64 / 1000.0,
        busy_fraction: busy_us as f64 / span,
        gaps: GapStats {
            count: gaps.len(),
            mean_ms: if gaps.is_empty() { 0.0 } else { gaps.iter().sum::<f64>() / gaps.len() as f64 },
            p50_ms: gaps.get(gaps.len() / 2).copied().unwrap_or(0.0),
            max_ms: gaps.last().copied().unwrap_or(0.0),
        },
    }
}

/// Reads a timeline; a malformed line is an error naming its number.
pub fn analyze(reader: impl BufRead) -> Result<TimelineReport, String> {
    let mut open: BTreeMap<usize, (u64, u32)> = BTreeMap::new();
    let mut per_worker: BTreeMap<usize, (u32, Vec<(u64, u64)>)> = BTreeMap::new();
    let mut synth_open: BTreeMap<(Option<usize>, Option<usize>), u64> = BTreeMap::new();
    let (mut synth_count, mut synth_us) = (0usize, 0u64);
    for (n, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| format!("timeline line {}: {e}", n + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let l: Line = serde_json::from_str(&line).map_err(|e| format!("timeline line {}: {e}", n + 1))?;
        match l.ev.as_str() {
            "gpu_start" => {
                let w = l.worker.ok_or_else(|| format!("timeline line {}: gpu_start without worker", n + 1))?;
                open.insert(w, (l.t_us, l.gpu.unwrap_or(0)));
            }
            "gpu_end" => {
                let w = l.worker.ok_or_else(|| format!("timeline line {}: gpu_end without worker", n + 1))?;
                if let Some((s, gpu)) = open.remove(&w) {
                    per_worker.entry(w).or_insert((gpu, Vec::new())).1.push((s, l.t_us.max(s)));
                }
            }
            "synth_start" => {
                synth_open.insert((l.worker, None), l.t_us);
            }
            "synth_end" => {
                if let Some(s) = synth_open.remove(&(l.worker, None)) {
                    synth_count += 1;
                    synth_us += l.t_us.saturating_sub(s);
                }
            }
            _ => {}
        }
    }
    let all = per_worker.values().flat_map(|(_, v)| v.iter().copied());
    let window = all.fold(None, |acc: Option<(u64, u64)>, (s, e)| Some(acc.map_or((s, e), |(a, b)| (a.min(s), b.max(e)))));
    let window = window.unwrap_or((0, 0));
    let mut per_gpu: BTreeMap<u32, Vec<(u64, u64)>> = BTreeMap::new();
    let workers = per_worker
        .into_iter()
        .map(|(w, (gpu, iv))| {
            per_gpu.entry(gpu).or_default().extend(iv.iter().copied());
            busy_stats(w as u64, gpu, iv, window)
        })
        .collect();
    let gpus = per_gpu.into_iter().map(|(g, iv)| busy_stats(g as u64, g, iv, window)).collect();
    Ok(TimelineReport {
        window_ms: (window.1 - window.0) as f64 / 1000.0,
        synth_count,
        synth_mean_ms: if synth_count == 0 { 0.0 } else { synth_us as f64 / 1000.0 / synth_count as f64 },
        workers,
        gpus,
    })
}

impl fmt::Display for TimelineReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "window {:.1} ms; {} partitions synthesized, mean {:.1} ms", self.window_ms, self.synth_count, self.synth_mean_ms)?;
        writeln!(
            f,
            "{:<10} {:>4} {:>7} {:>11} {:>7} {:>6} {:>10} {:>10} {:>10}",
            "", "gpu", "proofs", "busy_ms", "busy%", "gaps", "gap_mean", "gap_p50", "gap_max"
        )?;
        let rows =
            self.workers.iter().map(|s| (format!("worker {}", s.id), s)).chain(self.gpus.iter().map(|s| (format!("GPU {}", s.id), s)));
        for (label, s) in rows {
            writeln!(
                f,
                "{label:<10} {:>4} {:>7} {:>11.1} {:>6.1}% {:>6} {:>10.1} {:>10.1} {:>10.1}",
                s.gpu,
                s.proofs,
                s.busy_ms,
                100.0 * s.busy_fraction,
                s.gaps.count,
                s.gaps.mean_ms,
                s.gaps.p50_ms,
                s.gaps.max_ms
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_fraction_and_gaps() {
        let text = r#"
{"t_us":0,"ev":"gpu_start","worker":0,"gpu":0}
{"t_us":400,"ev":"gpu_end","worker":0,"gpu":0}
{"t_us":300,"ev":"gpu_start","worker":1,"gpu":0}
{"t_us":600,"ev":"gpu_end","worker":1,"gpu":0}
{"t_us":800,"ev":"gpu_start","worker":0,"gpu":0}
{"t_us":1000,"ev":"gpu_end","worker":0,"gpu":0}
{"t_us":10,"ev":"synth_start","worker":5}
{"t_us":30,"ev":"synth_end","worker":5}
"#;
        let r = analyze(text.as_bytes()).unwrap();
        assert_eq!(r.window_ms, 1.0);
        assert_eq!(r.synth_count, 1);
        assert_eq!(r.workers.len(), 2);
        assert!((r.workers[0].busy_fraction - 0.6).abs() < 1e-9);
        assert_eq!(r.workers[0].gaps.count, 1);
        assert!((r.workers[0].gaps.max_ms - 0.4).abs() < 1e-9);
        assert!((r.gpus[0].busy_fraction - 0.8).abs() < 1e-9);
        assert!((r.gpus[0].gaps.max_ms - 0.2).abs() < 1e-9);
        assert!(r.to_string().contains("GPU 0"));
    }

    #[test]
    fn malformed_line_is_named() {
        let e = analyze("{\"t_us\":1,\"ev\":\"x\"}\nnot json\n".as_bytes()).unwrap_err();
        assert!(e.contains("line 2"), "{e}");
    }
}
