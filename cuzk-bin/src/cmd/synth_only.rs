//! `cuzk-bench synth-only`: the CPU synthesis of a PoRep C2 alone, in this
//! process (no daemon, GPU or SRS): the C1 output decoded and checked, its
//! partition circuits built and synthesized, `--iterations` times, each
//! result dropped before the next. The existing bench tool's flags.

use anyhow::{ensure, Context, Result};
use cuzk_core::filecoin::{prepare, synthesize_partition, ProofKind, ProofRequest};
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// C1 output: Curio's envelope or a bare SealCommitPhase1Output JSON.
    #[arg(long)]
    pub c1: PathBuf,
    #[arg(long, default_value_t = 1)]
    pub sector_num: u64,
    #[arg(long, default_value_t = 1000)]
    pub miner_id: u64,
    /// Synthesis runs.
    #[arg(short, long, default_value_t = 1)]
    pub iterations: u32,
    /// Synthesize this partition only (default: all of them).
    #[arg(long)]
    pub partition: Option<usize>,
}

pub fn run(a: Args) -> Result<()> {
    let c1 = std::fs::read(&a.c1).with_context(|| format!("reading {}", a.c1.display()))?;
    println!("=== Synthesis Microbenchmark ===");
    println!("c1:         {} ({} bytes)", a.c1.display(), c1.len());
    println!("sector:     {} (miner {})", a.sector_num, a.miner_id);
    println!("partition:  {}", a.partition.map_or("all".to_string(), |p| p.to_string()));
    println!("iterations: {}\n", a.iterations);
    let mut req = ProofRequest::new(ProofKind::PorepSealCommit, a.miner_id);
    req.vanilla_proof = c1;
    req.sector_number = a.sector_num;
    let mut times = Vec::new();
    for i in 1..=a.iterations {
        let wall = Instant::now();
        let prepared = prepare(&req).with_context(|| format!("the C1 output {}", a.c1.display()))?;
        let synth = Instant::now();
        let (partitions, constraints) = match a.partition {
            Some(p) => {
                let n = prepared.circuits.len();
                ensure!(p < n, "--partition {p}: this C1 output has {n} partitions (0-{})", n - 1);
                let circuit = prepared.circuits.into_iter().nth(p).expect("checked above");
                let pa = synthesize_partition(p, circuit, &prepared.meta.public_inputs[p])?;
                (1, pa.num_constraints())
            }
            None => {
                let done = prepared.synthesize()?;
                (done.assignments.len(), done.assignments.first().map_or(0, |pa| pa.num_constraints()))
            }
        };
        let (wall, synth) = (wall.elapsed().as_secs_f64(), synth.elapsed().as_secs_f64());
        println!("  [{i}] wall={wall:.1}s  synth={synth:.1}s  circuits={partitions}  constraints={constraints}");
        times.push((wall, synth));
    }
    if times.len() > 1 {
        let avg = |f: fn(&(f64, f64)) -> f64| times.iter().map(f).sum::<f64>() / times.len() as f64;
        let min = |f: fn(&(f64, f64)) -> f64| times.iter().map(f).fold(f64::INFINITY, f64::min);
        println!("\n=== Summary ({} iterations) ===", times.len());
        println!("wall:   avg={:.1}s  min={:.1}s", avg(|t| t.0), min(|t| t.0));
        println!("synth:  avg={:.1}s  min={:.1}s", avg(|t| t.1), min(|t| t.1));
    }
    Ok(())
}
