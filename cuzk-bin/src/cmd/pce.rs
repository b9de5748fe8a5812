//! `cuzk pce build|info|verify`: pre-compiled constraint systems of the
//! built-in circuits and of the Filecoin circuits, as the engine keeps them
//! (`<circuit-id>.pce` in the param cache). Building a Filecoin circuit's
//! ahead spares the daemon recording it at its first proof (on every core,
//! 10-20 s for a 32 GiB partition on a 16-core host, while the other
//! partitions of that proof wait for it).

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

/// Which circuit: a built-in one, or a Filecoin proof kind at a sector size.
#[derive(clap::Args)]
#[group(required = true, multiple = false)]
pub struct Which {
    /// Circuit: sha256:<blocks>, mimc:<hashes> or synthetic:<constraints>[:<inputs>].
    #[arg(long)]
    pub circuit: Option<CircuitSpec>,
    /// Filecoin proof kind (porep, snap, window or winning), with
    /// --sector-size: that circuit as the daemon proves it.
    #[cfg(feature = "filecoin")]
    #[arg(long)]
    pub kind: Option<String>,
}

#[derive(clap::Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub which: Which,
    /// Sector size of --kind: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB.
    #[cfg(feature = "filecoin")]
    #[arg(long)]
    pub sector_size: Option<String>,
    /// Output file (default: <circuit-id>.pce in --param-cache).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Directory of the default output file [default: the daemon's
    /// srs.param_cache, where its engine loads PCEs: from --daemon-config,
    /// else /data/zk/cuzk.toml where that file exists, else /data/zk/params].
    #[arg(long)]
    pub param_cache: Option<PathBuf>,
    /// The daemon's config file, whose srs.param_cache is the default
    /// --param-cache.
    #[arg(long, conflicts_with = "param_cache")]
    pub daemon_config: Option<PathBuf>,
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
    #[arg(long, conflicts_with = "kind")]
    pub circuit: Option<CircuitSpec>,
    /// The Filecoin proof kind it should hold (with --sector-size): checked
    /// against the circuit recorded afresh.
    #[cfg(feature = "filecoin")]
    #[arg(long, requires = "sector_size")]
    pub kind: Option<String>,
    #[cfg(feature = "filecoin")]
    #[arg(long, requires = "kind")]
    pub sector_size: Option<String>,
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

/// A circuit to record: its id, a name for messages, and the recording.
struct Recordable {
    id: String,
    name: String,
    record: Box<dyn FnOnce() -> Result<Pce>>,
}

fn builtin(spec: CircuitSpec) -> Recordable {
    let id = BuiltinJob::circuit_id_of(&spec);
    let record_id = id.clone();
    Recordable { id, name: spec.to_string(), record: Box::new(move || Ok(pce::record(&record_id, spec.blank())?)) }
}

#[cfg(feature = "filecoin")]
fn filecoin(kind: &str, sector_size: Option<&str>) -> Result<Recordable> {
    use cuzk_core::filecoin::{circuit_id, parse_sector_size, setup, ProofKind, ProofType};
    let k = ProofKind::from_name(kind).with_context(|| format!("unknown kind {kind:?}: porep, snap, window or winning"))?;
    let size = sector_size.context("--kind needs --sector-size")?;
    let bytes = parse_sector_size(size).with_context(|| format!("unknown sector size {size:?}: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB"))?;
    let pt = ProofType::current(k, bytes)?;
    Ok(Recordable { id: circuit_id(pt)?, name: format!("{pt:?}"), record: Box::new(move || Ok(setup::record_blank(pt)?)) })
}

impl Which {
    fn recordable(self, sector_size: Option<&str>) -> Result<Recordable> {
        if let Some(spec) = self.circuit {
            if sector_size.is_some() {
                bail!("--sector-size goes with --kind, not with --circuit");
            }
            return Ok(builtin(spec));
        }
        #[cfg(feature = "filecoin")]
        if let Some(kind) = &self.kind {
            return filecoin(kind, sector_size);
        }
        let _ = sector_size;
        bail!("--circuit or --kind names the circuit")
    }
}

fn build(a: BuildArgs) -> Result<()> {
    #[cfg(feature = "filecoin")]
    let size = a.sector_size.as_deref();
    #[cfg(not(feature = "filecoin"))]
    let size = None;
    let Recordable { id, name, record } = a.which.recordable(size)?;
    let out = match a.out {
        Some(out) => out,
        None => param_cache(a.param_cache, a.daemon_config.as_deref())?.join(format!("{id}.pce")),
    };
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let t = Instant::now();
    let pce = record().with_context(|| format!("recording {name}"))?;
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

/// `given`, else the daemon's `srs.param_cache` (its config read as the
/// daemon reads it).
fn param_cache(given: Option<PathBuf>, daemon_config: Option<&Path>) -> Result<PathBuf> {
    if let Some(dir) = given {
        return Ok(dir);
    }
    // The daemon runs on its defaults where a named config is missing (a
    // restart loop helps no one); a tool that writes gigabytes where that
    // config says stops instead: the name is likely a typo.
    if let Some(path) = daemon_config.filter(|p| !p.exists()) {
        bail!("daemon config {} does not exist (name the folder with --param-cache instead)", path.display());
    }
    let (loaded, _) = cuzk_bin::daemon::process::load_config(daemon_config).map_err(anyhow::Error::msg)?;
    Ok(loaded.config.srs.param_cache)
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
    println!("densities    A aux {}, B inputs {}, B aux {}", p.a_aux_density.count(), p.b_input_density.count(), p.b_aux_density.count());
    println!("in memory    {:.1} MiB", mib(p.bytes()));
    Ok(())
}

fn verify(a: VerifyArgs) -> Result<()> {
    let p = read(&a.pce)?;
    #[cfg(feature = "filecoin")]
    if let Some(kind) = &a.kind {
        let Recordable { id, name, record } = filecoin(kind, a.sector_size.as_deref())?;
        if p.circuit_id != id {
            bail!("{} holds circuit {:?}, not {name}'s {id:?}", a.pce.display(), p.circuit_id);
        }
        if record().with_context(|| format!("recording {name}"))? != p {
            bail!("{} is stale: {name}'s R1CS recorded now differs from the file's", a.pce.display());
        }
        println!("{}: matches {name} (its R1CS recorded afresh)", a.pce.display());
        return Ok(());
    }
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
