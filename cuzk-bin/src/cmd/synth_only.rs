//! `cuzk-bench synth-only`: the CPU synthesis of a PoRep C2, a SnapDeals
//! update, a WindowPoSt partition or a WinningPoSt alone, in this process
//! (no daemon, GPU or SRS): the request decoded and checked, its partition
//! circuits built and synthesized, `--iterations` times, each result
//! dropped before the next. The existing bench tool's flags (`--c1 FILE`;
//! the other kinds as `cuzk single` takes them: `-t snap|wpost|winning
//! --vanilla FILE --registered-proof N`, with `--comm-r-old --comm-r-new
//! --comm-d-new HEX` or `--randomness HEX`: what `cuzk filecoin-workload`
//! prints), and ours: `--witness-only` also times what the PCE path runs
//! per partition (witness-only synthesis; with `--pce FILE`, the CPU SpMV
//! that turns the witness into a, b, c, on one thread and on all), on the
//! same partition; `--no-classic` times only that.

use super::proof_request::{fill_filecoin, kind, VanillaArgs};
use anyhow::{ensure, Context, Result};
use cuzk_bin::daemon::wire::{filecoin_request, proof_kind};
use cuzk_bin::proto as pb;
use cuzk_core::filecoin::{prepare, synthesize_partition, ProofRequest};
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Proof type: porep, snap, wpost or winning.
    #[arg(short = 't', long = "type", default_value = "porep")]
    pub proof_type: String,
    /// C1 output (porep): Curio's envelope or a bare SealCommitPhase1Output JSON.
    #[arg(long)]
    pub c1: Option<PathBuf>,
    #[command(flatten)]
    pub vanilla_args: VanillaArgs,
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
    /// Also time witness-only synthesis of the partition after the classic
    /// one, and their ratio (classic as the engine runs it: a PoSt
    /// partition's sectors in groups on every core, the others on one
    /// thread; witness-only on --threads; partition 0 unless named).
    #[arg(long)]
    pub witness_only: bool,
    /// The circuit's recorded R1CS (`cuzk filecoin-setup --save-pce` writes
    /// `<id>.pce`): with --witness-only, also time its CPU SpMV.
    #[arg(long, requires = "witness_only")]
    pub pce: Option<PathBuf>,
    /// With --witness-only: the thread counts to time it on, e.g. 1,2,16
    /// (a PoRep partition generates its challenges' witnesses on them, a
    /// PoSt partition its sectors'; default: 1, as the engine does).
    #[arg(long, value_delimiter = ',', requires = "witness_only")]
    pub threads: Vec<usize>,
    /// With --witness-only: skip the classic synthesis (minutes and ~17 GiB
    /// for a 32 GiB PoRep partition), time only the PCE path.
    #[arg(long, requires = "witness_only")]
    pub no_classic: bool,
}

/// The request `a` names, as the daemon decodes it from the same flags
/// `cuzk single` sends, and a line saying what it read.
fn request(a: &Args) -> Result<(ProofRequest, String)> {
    let mut r = pb::SubmitProofRequest {
        proof_kind: kind(&a.proof_type)? as i32,
        registered_proof: a.vanilla_args.registered_proof,
        sector_number: a.sector_num,
        miner_id: a.miner_id,
        ..Default::default()
    };
    let kind = proof_kind(r.proof_kind).ok().flatten().context("synth-only takes -t porep, snap, wpost or winning")?;
    let read = fill_filecoin(r.proof_kind(), a.c1.as_ref(), &a.vanilla_args, &mut r)?;
    Ok((filecoin_request(kind, &r), read))
}

pub fn run(a: Args) -> Result<()> {
    let (req, read) = request(&a)?;
    println!("=== Synthesis Microbenchmark ===");
    println!("{read}");
    println!("sector:     {} (miner {})", a.sector_num, a.miner_id);
    // The comparison is per partition.
    let partition = a.partition.or(a.witness_only.then_some(0));
    println!("partition:  {}", partition.map_or("all".to_string(), |p| p.to_string()));
    println!("iterations: {}\n", a.iterations);
    let pce = match &a.pce {
        Some(path) => {
            let t = Instant::now();
            let p = cuzk_core::pce::file::read(path).with_context(|| format!("the PCE {}", path.display()))?;
            println!("pce:        {} ({} constraints, loaded in {:.1} s)", path.display(), p.num_constraints(), t.elapsed().as_secs_f64());
            Some(p)
        }
        None => None,
    };
    let mut times = Vec::new();
    for i in 1..=a.iterations {
        if a.no_classic {
            witness_only(&req, partition.unwrap_or(0), i, None, &a.threads, pce.as_ref())?;
            continue;
        }
        let wall = Instant::now();
        let prepared = prepare(&req).context("the request")?;
        let synth = Instant::now();
        let (partitions, constraints) = match partition {
            Some(p) => {
                let n = prepared.circuits.len();
                ensure!(p < n, "--partition {p}: this request has {n} partitions (0-{})", n - 1);
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
        if a.witness_only {
            witness_only(&req, partition.unwrap_or(0), i, Some(synth), &a.threads, pce.as_ref())?;
        }
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

/// Witness-only synthesis of one partition (the PCE path) on each of
/// `threads` thread counts, against `classic` seconds of the classic
/// synthesis just measured (if it was); then the PCE's SpMV.
fn witness_only(
    req: &ProofRequest,
    p: usize,
    i: u32,
    classic: Option<f64>,
    threads: &[usize],
    pce: Option<&cuzk_core::pce::Pce>,
) -> Result<()> {
    let mut witness = None;
    for &t in if threads.is_empty() { &[1] } else { threads } {
        ensure!(t > 0, "--threads: a thread count is at least 1");
        drop(witness.take()); // one partition's witness in memory at a time
        let prepared = prepare(req)?;
        let n = prepared.circuits.len();
        ensure!(p < n, "--partition {p}: this request has {n} partitions (0-{})", n - 1);
        let circuit = prepared.circuits.into_iter().nth(p).expect("checked above").with_witness_threads(t);
        // As the engine does: into room reserved for the PCE's shape.
        let room = pce.map_or_else(Default::default, |p| p.empty_witness());
        let start = Instant::now();
        let w = cuzk_core::cs::generate_witness_into(circuit, room)?;
        let secs = start.elapsed().as_secs_f64();
        let ratio = classic.map_or(String::new(), |c| format!("  classic/witness-only={:.1}x", c / secs));
        println!(
            "  [{i}] witness-only={secs:.2}s  threads={t}  partition={p}  variables={}{ratio}",
            w.input_assignment.len() + w.aux_assignment.len(),
        );
        witness = Some(w);
    }
    let w = witness.expect("at least one thread count");
    if let Some(pce) = pce {
        pce.check_shape(&cuzk_core::pce::Shape::of_witness(&w)).context("the PCE does not match this circuit")?;
        let all = cuzk_core::par::threads();
        for t in [1, all] {
            cuzk_core::par::set_threads(t);
            // The first run also faults in the matrices as read from the file.
            let mut secs: Vec<f64> = (0..3)
                .map(|_| {
                    let start = Instant::now();
                    std::hint::black_box(cuzk_core::pce::spmv::evaluate(pce, &w.input_assignment, &w.aux_assignment));
                    start.elapsed().as_secs_f64()
                })
                .collect();
            secs.sort_by(f64::total_cmp);
            println!("  [{i}] spmv={:.2}s (median of 3, min {:.2}s)  threads={t}", secs[1], secs[0]);
        }
        cuzk_core::par::set_threads(all);
    }
    Ok(())
}
