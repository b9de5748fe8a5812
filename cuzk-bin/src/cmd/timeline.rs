//! `cuzk timeline FILE`: per-worker and per-GPU busy fraction and idle-gap
//! statistics from an engine timeline (JSON lines, `logging.timeline` or
//! CUZK_TIMELINE).

use anyhow::{Context, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The timeline file the engine wrote.
    pub file: PathBuf,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: Args) -> Result<()> {
    let f = std::fs::File::open(&a.file).with_context(|| format!("cannot open timeline {}", a.file.display()))?;
    let report =
        cuzk_core::engine::timeline_stats::analyze(std::io::BufReader::new(f)).map_err(|e| anyhow::anyhow!("{}: {e}", a.file.display()))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{report}");
    }
    Ok(())
}
