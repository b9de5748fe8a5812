//! `cuzk pce build|info|verify`: pre-compiled constraint systems of the
//! built-in circuits, as the engine keeps them (`<circuit-id>.pce` in the
//! param cache).

use anyhow::{bail, Context, Result};
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::engine::BuiltinJob;
use cuzk_core::pce::{self, file, Pce};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Subcommand)]
pub enum PceCommand {
    /// Record a built-in circuit's R1CS and write its .pce file.
    Build(BuildArgs),
    /// Check a .pce file and print what it holds.
    Info(InfoArgs),
    /// Check a .pce file; with --circuit, also that it is that circuit's
    /// current R1CS and gives classic synthesis's a, b, c.
    Verify(VerifyArgs),
}

#[derive(clap::Args)]
pub struct BuildArgs {
    /// Circuit: sha256:<blocks>, mimc:<hashes> or synthetic:<constraints>[:<inputs>].
    #[arg(long)]
    pub circuit: CircuitSpec,
    /// Output file (default: <circuit-id>.pce in --param-cache).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Directory of the default output file.
    #[arg(long, default_value = ".")]
    pub param_cache: PathBuf,
}

#[derive(clap::Args)]
pub struct InfoArgs {
    /// The .pce file.
    pub pce: PathBuf,
}

#[derive(clap::Args)]
pub struct VerifyArgs {
    /// The .pce file.
    pub pce: PathBuf,
    /// The built-in circuit it should hold.
    #[arg(long)]
    pub circuit: Option<CircuitSpec>,
    /// Witness seed of the instance whose a, b, c are compared.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run(c: PceCommand) -> Result<()> {
    match c {
        PceCommand::Build(a) => build(a),
        PceCommand::Info(a) => info(&a.pce),
        PceCommand::Verify(a) => verify(a),
    }
}

pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}

fn build(a: BuildArgs) -> Result<()> {
    let id = BuiltinJob::circuit_id_of(&a.circuit);
    let out = a.out.unwrap_or_else(|| a.param_cache.join(format!("{id}.pce")));
    let t = Instant::now();
    let pce = pce::record(&id, a.circuit.blank()).with_context(|| format!("recording {}", a.circuit))?;
    let recorded = t.elapsed().as_secs_f64();
    file::write(&pce, &out)?;
    let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    println!(
        "pce {id}: {} constraints, recorded in {recorded:.2} s; wrote {} ({:.1} MiB)",
        pce.num_constraints(),
        out.display(),
        mib(size)
    );
    Ok(())
}

fn read(path: &Path) -> Result<Pce> {
    file::read(path).with_context(|| format!("reading {}", path.display()))
}

fn info(path: &Path) -> Result<()> {
    let p = read(path)?;
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    println!("file         {} ({:.1} MiB, version {}, checksum ok)", path.display(), mib(size), file::VERSION);
    println!("circuit id   {}", p.circuit_id);
    println!("constraints  {}", p.num_constraints());
    println!("inputs       {} (the constant one included)", p.shape.num_inputs);
    println!("aux          {}", p.shape.num_aux);
    println!("nonzeros     A {}, B {}, C {}", p.a.nnz(), p.b.nnz(), p.c.nnz());
    println!("coefficients {} distinct", p.coeffs.len());
    println!(
        "densities    A aux {}, B inputs {}, B aux {}",
        p.a_aux_density.count(),
        p.b_input_density.count(),
        p.b_aux_density.count()
    );
    println!("in memory    {:.1} MiB", mib(p.bytes()));
    Ok(())
}

fn verify(a: VerifyArgs) -> Result<()> {
    let p = read(&a.pce)?;
    let Some(spec) = a.circuit else {
        println!("{}: a valid PCE file for {} (checksum and indices checked)", a.pce.display(), p.circuit_id);
        return Ok(());
    };
    let id = BuiltinJob::circuit_id_of(&spec);
    if p.circuit_id != id {
        bail!("{} holds circuit {:?}, not {id:?}", a.pce.display(), p.circuit_id);
    }
    let fresh = pce::record(&id, spec.blank()).with_context(|| format!("recording {spec}"))?;
    if fresh != p {
        bail!("{} is stale: {spec}'s R1CS recorded now differs from the file's", a.pce.display());
    }
    let classic = cuzk_core::cs::synthesize(spec.instance(a.seed)).with_context(|| format!("synthesizing {spec}"))?;
    let ours = p.synthesize(spec.instance(a.seed))?;
    if ours != classic {
        bail!("{}: a, b, c from the PCE differ from classic synthesis of {spec} (seed {})", a.pce.display(), a.seed);
    }
    println!("{}: matches {spec} (recorded afresh, and a, b, c of seed {} equal classic synthesis)", a.pce.display(), a.seed);
    Ok(())
}
