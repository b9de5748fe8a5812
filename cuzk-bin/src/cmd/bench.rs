//! `cuzk bench`: timings of setup, proving, NTT and MSM on this machine.
//! Each prints one table row per measured step (median and min of runs).

use crate::{cmd, files};
use anyhow::Result;
use cuzk_core::arith::msm;
use cuzk_core::arith::MsmAffine;
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::ntt::Domain;
use cuzk_core::{cs, groth16, Fr, G1Affine, G2Affine};
use ff::Field;
use group::Group;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Subcommand)]
pub enum Bench {
    /// Synthesis and proving of a built-in circuit.
    Prove {
        #[arg(long)]
        circuit: CircuitSpec,
        /// Params for the circuit (default: generated first, not timed here).
        #[arg(long)]
        params: Option<PathBuf>,
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Circuits per batch (sharing the SRS).
        #[arg(long, default_value_t = 1)]
        batch: usize,
    },
    /// Synthesis of a built-in circuit: classic, witness-only, and
    /// witness-only + the SpMV of its PCE (on one thread and on all).
    Synth {
        #[arg(long)]
        circuit: CircuitSpec,
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
    /// The PCE's SpMV (a, b, c from a witness): on all cores and, with a
    /// CUDA device, on the GPU (matrices resident, or streamed from host
    /// memory), against uploading a, b, c.
    Spmv {
        #[arg(long)]
        circuit: CircuitSpec,
        #[arg(long, default_value_t = 5)]
        runs: usize,
    },
    /// Parameter generation for a built-in circuit.
    Setup {
        #[arg(long)]
        circuit: CircuitSpec,
        #[arg(long, default_value_t = 1)]
        runs: usize,
    },
    /// Forward NTT, inverse and the whole H term at 2^log.
    Ntt {
        #[arg(long)]
        log: u32,
        #[arg(long, default_value_t = 5)]
        runs: usize,
    },
    /// G1 (or G2) MSM of random points and scalars.
    Msm {
        #[arg(long)]
        size: usize,
        #[arg(long)]
        g2: bool,
        /// Fraction of scalars that are 1 (the rest random), as in Filecoin witnesses.
        #[arg(long, default_value_t = 0.0)]
        ones: f64,
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
    /// A steady stream of jobs through the engine (GPU backend where there
    /// is one): throughput, and per-GPU busy fraction from the timeline.
    Engine(EngineBench),
}

#[derive(clap::Args)]
pub struct EngineBench {
    #[arg(long)]
    circuit: CircuitSpec,
    /// Params for the circuit (default: generated once, not timed).
    #[arg(long)]
    params: Option<PathBuf>,
    #[arg(long, default_value_t = 8)]
    jobs: usize,
    #[arg(long, default_value_t = 1)]
    partitions: usize,
    /// gpus.gpu_workers_per_device; a list runs one engine per value.
    #[arg(long, value_delimiter = ',', default_value = "2")]
    gpu_workers: Vec<usize>,
    /// synthesis.partition_workers (0: the config default)
    #[arg(long, default_value_t = 0)]
    partition_workers: usize,
    /// pipeline.synthesis_concurrency (0: the config default)
    #[arg(long, default_value_t = 0)]
    synthesis_concurrency: usize,
    /// gpus.vram_limit, e.g. 16GiB (0: none); a list runs one engine per value.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    vram_limit: Vec<String>,
    /// Folder for the engine timelines (default: the temporary folder).
    #[arg(long)]
    timeline_dir: Option<PathBuf>,
}

pub(super) fn time_runs(runs: usize, mut f: impl FnMut() -> Result<()>) -> Result<(f64, f64)> {
    let mut t = Vec::new();
    for _ in 0..runs.max(1) {
        let s = Instant::now();
        f()?;
        t.push(s.elapsed().as_secs_f64() * 1e3);
    }
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Ok((t[t.len() / 2], t[0]))
}

pub(super) fn row(what: &str, size: &str, (median, min): (f64, f64)) {
    println!("| {what:<22} | {size:>14} | {median:>12.1} | {min:>12.1} |");
}

fn header() {
    println!("| {:<22} | {:>14} | {:>12} | {:>12} |", "step", "size", "median ms", "min ms");
    println!("|{:-<24}|{:->16}|{:->14}|{:->14}|", "", "", "", "");
}

pub fn run(b: Bench) -> Result<()> {
    if let Bench::Engine(e) = b {
        return engine_bench(e);
    }
    println!("threads: {}", cuzk_core::par::threads());
    header();
    match b {
        Bench::Synth { circuit, runs } => synth_bench(circuit, runs)?,
        Bench::Spmv { circuit, runs } => super::bench_spmv::run(circuit, runs)?,
        Bench::Prove { circuit, params, runs, batch } => {
            let params = match params {
                Some(p) => files::read_params(&p, true)?,
                None => cmd::setup::generate(&circuit)?.0,
            };
            let mut assignments = Vec::new();
            let synth = time_runs(runs, || {
                assignments = (0..batch as u64).map(|i| cs::synthesize(circuit.instance(1 + i))).collect::<Result<Vec<_>, _>>()?;
                Ok(())
            })?;
            row("synthesize", &format!("{batch} × {circuit}"), synth);
            let prove = time_runs(runs, || {
                groth16::prove_synthesized(&params, &assignments)?;
                Ok(())
            })?;
            row("prove (after synthesis)", &format!("{batch} × {circuit}"), prove);
        }
        Bench::Setup { circuit, runs } => {
            let t = time_runs(runs, || cmd::setup::generate(&circuit).map(|_| ()))?;
            row("setup", &circuit.to_string(), t);
        }
        Bench::Ntt { log, runs } => {
            let n = 1usize << log;
            let d = Domain::new(log);
            let mut a = random_scalars(n, 0.0);
            row(
                "ntt",
                &format!("2^{log}"),
                time_runs(runs, || {
                    d.fft(&mut a);
                    Ok(())
                })?,
            );
            row(
                "intt",
                &format!("2^{log}"),
                time_runs(runs, || {
                    d.ifft(&mut a);
                    Ok(())
                })?,
            );
            row(
                "coset ntt",
                &format!("2^{log}"),
                time_runs(runs, || {
                    d.coset_fft(&mut a);
                    Ok(())
                })?,
            );
            let (x, y, z) = (random_scalars(n, 0.0), random_scalars(n, 0.0), random_scalars(n, 0.0));
            let h = time_runs(runs, || {
                groth16::h_term::h_coefficients(&x, &y, &z)?;
                Ok(())
            })?;
            row("h term (7 NTTs)", &format!("2^{log}"), h);
        }
        Bench::Msm { size, g2, ones, runs } => {
            let scalars = random_scalars(size, ones);
            let label = format!("{size} ({:.0}% ones)", ones * 100.0);
            if g2 {
                let points = random_points::<G2Affine>(size);
                row(
                    "msm g2",
                    &label,
                    time_runs(runs, || {
                        std::hint::black_box(msm::msm(&points, &scalars));
                        Ok(())
                    })?,
                );
            } else {
                let points = random_points::<G1Affine>(size);
                row(
                    "msm g1",
                    &label,
                    time_runs(runs, || {
                        std::hint::black_box(msm::msm(&points, &scalars));
                        Ok(())
                    })?,
                );
            }
        }
        Bench::Engine(_) => unreachable!("handled above"),
    }
    Ok(())
}

/// Classic synthesis against witness-only synthesis and the PCE's SpMV.
/// Synthesis runs on one thread; the SpMV on one thread, then on all.
fn synth_bench(circuit: CircuitSpec, runs: usize) -> Result<()> {
    use cuzk_core::pce::{self, spmv};
    use std::hint::black_box;
    let size = circuit.to_string();
    let id = cuzk_core::engine::BuiltinJob::circuit_id_of(&circuit);
    let mut recorded = None;
    row(
        "record pce",
        &size,
        time_runs(1, || {
            recorded = Some(pce::record(&id, circuit.blank())?);
            Ok(())
        })?,
    );
    let p = recorded.expect("recorded");
    row(
        "classic",
        &size,
        time_runs(runs, || {
            black_box(cs::synthesize(circuit.instance(1))?);
            Ok(())
        })?,
    );
    // Into room reserved for the PCE's shape, as the engine does.
    row(
        "witness-only",
        &size,
        time_runs(runs, || {
            black_box(cs::generate_witness_into(circuit.instance(1), p.empty_witness())?);
            Ok(())
        })?,
    );
    let w = cs::generate_witness(circuit.instance(1))?;
    let all = cuzk_core::par::threads();
    let mut counts = vec![1, all];
    counts.dedup();
    for t in counts {
        cuzk_core::par::set_threads(t);
        row(
            &format!("spmv, {t} thr"),
            &size,
            time_runs(runs, || {
                black_box(spmv::evaluate(&p, &w.input_assignment, &w.aux_assignment));
                Ok(())
            })?,
        );
        row(
            &format!("witness + spmv, {t} thr"),
            &size,
            time_runs(runs, || {
                black_box(p.synthesize(circuit.instance(1))?);
                Ok(())
            })?,
        );
    }
    cuzk_core::par::set_threads(all);
    let file = pce::file::to_bytes(&p).len() as f64 / (1u64 << 20) as f64;
    println!(
        "pce: {} constraints, nnz A {} B {} C {}, {} coefficients; {file:.1} MiB file, {:.1} MiB in memory",
        p.num_constraints(),
        p.a.nnz(),
        p.b.nnz(),
        p.c.nnz(),
        p.coeffs.len(),
        p.bytes() as f64 / (1u64 << 20) as f64
    );
    Ok(())
}

/// The bench's circuit with its SRS made once (every engine run of the
/// matrix reuses it; the engine loads it through `load_params`).
struct BenchCircuit {
    job: cuzk_core::engine::BuiltinJob,
    params: std::sync::Arc<cuzk_core::srs::Parameters>,
}

impl cuzk_core::engine::PartitionedCircuit for BenchCircuit {
    fn circuit_id(&self) -> String {
        self.job.circuit_id()
    }
    fn partitions(&self) -> usize {
        self.job.partitions()
    }
    fn circuit(&self, partition: usize) -> Result<Box<dyn cuzk_core::engine::AnyCircuit>, cuzk_core::failure::CircuitError> {
        self.job.circuit(partition)
    }
    fn load_params(&self, _: &std::path::Path) -> Result<cuzk_core::srs::Parameters, cuzk_core::failure::CircuitError> {
        Ok((*self.params).clone())
    }
}

/// For each (gpu workers, VRAM limit): starts the engine as the daemon
/// would, loads the SRS (not timed), submits every job at once, and reports
/// wall time, proofs per second and the timeline's busy fractions.
fn engine_bench(b: EngineBench) -> Result<()> {
    use cuzk_core::engine::{BuiltinJob, Engine, JobOutcome, PartitionedCircuit, ProofRequest, ShutdownMode};
    use std::sync::Arc;
    let params = Arc::new(match &b.params {
        Some(p) => files::read_params(p, true)?,
        None => cmd::setup::generate(&b.circuit)?.0,
    });
    let dir = b.timeline_dir.clone().unwrap_or_else(std::env::temp_dir);
    let mut rows = Vec::new();
    for limit in &b.vram_limit {
        for &gw in &b.gpu_workers {
            let timeline = dir.join(format!("timeline-gw{gw}-vram{limit}.jsonl"));
            let _ = std::fs::remove_file(&timeline);
            let mut config = cuzk_core::config::Config::default();
            config.gpus.gpu_workers_per_device = gw;
            if b.partition_workers > 0 {
                config.synthesis.partition_workers = b.partition_workers;
            }
            if b.synthesis_concurrency > 0 {
                config.pipeline.synthesis_concurrency = Some(b.synthesis_concurrency);
            }
            let bytes = cuzk_core::config::parse_size(limit).map_err(|e| anyhow::anyhow!("--vram-limit: {e}"))?;
            config.gpus.vram_limit = cuzk_core::config::ByteSize(bytes);
            config.logging.timeline = timeline.display().to_string();
            let engine = Engine::start(config).map_err(|e| anyhow::anyhow!("{e}"))?;
            let circuits: Vec<Arc<BenchCircuit>> = (0..b.jobs)
                .map(|i| Arc::new(BenchCircuit { job: BuiltinJob::new(b.circuit, b.partitions, 1000 + i as u64), params: params.clone() }))
                .collect();
            let t = Instant::now();
            engine.preload_srs(&circuits[0].circuit_id()).ok();
            let warm = ProofRequest::custom(circuits[0].clone());
            let (warm_id, _) = engine.prove(warm, None)?; // SRS into the engine (and VRAM), not timed
            println!(
                "gw={gw} vram_limit={limit}: backend {}, SRS and first proof in {:.1} s",
                engine.status().backend,
                t.elapsed().as_secs_f64()
            );
            let t = Instant::now();
            let ids: Vec<_> = circuits.iter().map(|c| engine.submit(ProofRequest::custom(c.clone()))).collect::<Result<_, _>>()?;
            for id in ids {
                match engine.await_job(id, None)? {
                    JobOutcome::Completed(_) => {}
                    other => anyhow::bail!("job {id}: {other:?}"),
                }
            }
            let wall = t.elapsed().as_secs_f64();
            let st = engine.status();
            engine.shutdown(ShutdownMode::Drain);
            // The measured stream only: without the warm-up job's events.
            let warm_tag = format!("\"job\":\"{warm_id}\"");
            let text: String =
                std::fs::read_to_string(&timeline)?.lines().filter(|l| !l.contains(&warm_tag)).map(|l| format!("{l}\n")).collect();
            let report = cuzk_core::engine::timeline_stats::analyze(text.as_bytes()).map_err(|e| anyhow::anyhow!(e))?;
            print!("{report}");
            let busy = report.gpus.iter().map(|g| format!("{:.1}%", g.busy_fraction * 100.0)).collect::<Vec<_>>().join(" ");
            let peak = st.devices.iter().map(|d| cuzk_core::config::format_size(d.vram.peak_bytes)).collect::<Vec<_>>().join(" ");
            let proofs = b.jobs * b.partitions;
            rows.push(format!(
                "| {} | {}x{} | {gw} | {limit} | {:.2} | {:.2} | {:.1} | {busy} | {peak} |",
                b.circuit,
                b.jobs,
                b.partitions,
                wall,
                proofs as f64 / wall,
                wall * 1e3 / proofs as f64
            ));
        }
    }
    println!("\n| circuit | jobs x partitions | gw | vram_limit | wall s | proofs/s | ms/proof | GPU busy | VRAM peak |");
    println!("|---|---|---|---|---|---|---|---|---|");
    rows.iter().for_each(|r| println!("{r}"));
    Ok(())
}

fn random_scalars(n: usize, ones: f64) -> Vec<Fr> {
    cuzk_core::par::collect_indexed(n, |i| {
        let mut rng = rand_core::OsRng;
        if ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as f64 / u64::MAX as f64) < ones {
            Fr::ONE
        } else {
            Fr::random(&mut rng)
        }
    })
}

/// Random points cheaply: a random base, then successive additions of a
/// second random point (independent enough for timing).
fn random_points<A: MsmAffine + Default>(n: usize) -> Vec<A> {
    let step = A::Proj::random(&mut rand_core::OsRng);
    let chunks = cuzk_core::par::map_ranges(n, 1 << 12, |r| {
        let mut p = A::Proj::random(&mut rand_core::OsRng);
        let proj: Vec<A::Proj> = r
            .map(|_| {
                p += step;
                p
            })
            .collect();
        let mut out = vec![A::default(); proj.len()];
        A::batch_normalize(&proj, &mut out);
        out
    });
    chunks.concat()
}
