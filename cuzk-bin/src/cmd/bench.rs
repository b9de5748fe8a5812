//! `cuzk bench`: timings of setup, proving, NTT and MSM on this machine.
//! Each prints one table row per measured step (median and min of runs).

use crate::{cmd, files};
use anyhow::Result;
use cuzk_core::arith::msm;
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::ntt::Domain;
use cuzk_core::arith::MsmAffine;
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
}

fn time_runs(runs: usize, mut f: impl FnMut() -> Result<()>) -> Result<(f64, f64)> {
    let mut t = Vec::new();
    for _ in 0..runs.max(1) {
        let s = Instant::now();
        f()?;
        t.push(s.elapsed().as_secs_f64() * 1e3);
    }
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Ok((t[t.len() / 2], t[0]))
}

fn row(what: &str, size: &str, (median, min): (f64, f64)) {
    println!("| {what:<22} | {size:>14} | {median:>12.1} | {min:>12.1} |");
}

fn header() {
    println!("| {:<22} | {:>14} | {:>12} | {:>12} |", "step", "size", "median ms", "min ms");
    println!("|{:-<24}|{:->16}|{:->14}|{:->14}|", "", "", "", "");
}

pub fn run(b: Bench) -> Result<()> {
    println!("threads: {}", cuzk_core::par::threads());
    header();
    match b {
        Bench::Prove { circuit, params, runs, batch } => {
            let params = match params {
                Some(p) => files::read_params(&p, true)?,
                None => cmd::setup::generate(&circuit)?.0,
            };
            let mut assignments = Vec::new();
            let synth = time_runs(runs, || {
                assignments = (0..batch as u64)
                    .map(|i| cs::synthesize(circuit.instance(1 + i)))
                    .collect::<Result<Vec<_>, _>>()?;
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
            row("ntt", &format!("2^{log}"), time_runs(runs, || Ok(d.fft(&mut a)))?);
            row("intt", &format!("2^{log}"), time_runs(runs, || Ok(d.ifft(&mut a)))?);
            row("coset ntt", &format!("2^{log}"), time_runs(runs, || Ok(d.coset_fft(&mut a)))?);
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
                row("msm g2", &label, time_runs(runs, || { std::hint::black_box(msm::msm(&points, &scalars)); Ok(()) })?);
            } else {
                let points = random_points::<G1Affine>(size);
                row("msm g1", &label, time_runs(runs, || { std::hint::black_box(msm::msm(&points, &scalars)); Ok(()) })?);
            }
        }
    }
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
        let proj: Vec<A::Proj> = r.map(|_| {
            p += step;
            p
        }).collect();
        let mut out = vec![A::default(); proj.len()];
        A::batch_normalize(&proj, &mut out);
        out
    });
    chunks.concat()
}
