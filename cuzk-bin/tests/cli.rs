//! The `cuzk` binary end to end: setup → prove → verify, and the exit
//! status and message of each kind of bad input.

use std::path::Path;
use std::process::{Command, Output};

fn cuzk(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuzk")).args(args).output().expect("run cuzk")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn p(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

#[test]
fn setup_prove_verify_and_failures() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (params, vk, proof) = (p(d, "c.params"), p(d, "c.vk"), p(d, "c.proof"));
    let spec = "synthetic:1500:4";

    let o = cuzk(&["setup", "--circuit", spec, "--params", &params]);
    assert!(o.status.success(), "{}", text(&o));
    let o = cuzk(&["prove", "--circuit", spec, "--params", &params, "--count", "2", "--proof", &proof]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::metadata(&proof).unwrap().len(), 384);
    let o = cuzk(&["verify", "--vk", &vk, "--proof", &proof]);
    assert!(o.status.success(), "{}", text(&o));
    // The params file works as a key too.
    let o = cuzk(&["verify", "--vk", &params, "--proof", &proof]);
    assert!(o.status.success(), "{}", text(&o));

    // Wrong public inputs: invalid, exit 1.
    let inputs = format!("{proof}.inputs");
    let good = std::fs::read_to_string(&inputs).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    std::fs::write(&inputs, format!("{}\n{}\n", lines[1], lines[0])).unwrap();
    let o = cuzk(&["verify", "--vk", &vk, "--proof", &proof]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("INVALID"));
    std::fs::write(&inputs, &good).unwrap();

    // Truncated proof file: bad input, exit 2, says what is wrong.
    let bytes = std::fs::read(&proof).unwrap();
    std::fs::write(&proof, &bytes[..200]).unwrap();
    let o = cuzk(&["verify", "--vk", &vk, "--proof", &proof]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("192 bytes"), "{}", text(&o));

    // Params of another circuit.
    let o = cuzk(&["prove", "--circuit", "synthetic:1501:4", "--params", &params, "--proof", &proof]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("different circuit"), "{}", text(&o));

    // Truncated params name the section.
    let pb = std::fs::read(&params).unwrap();
    let cut = p(d, "cut.params");
    std::fs::write(&cut, &pb[..pb.len() / 2]).unwrap();
    let o = cuzk(&["prove", "--circuit", spec, "--params", &cut, "--proof", &proof]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("truncated in section"), "{}", text(&o));

    // A missing file and a bad circuit spec.
    let o = cuzk(&["prove", "--circuit", spec, "--params", &p(d, "nope.params"), "--proof", &proof]);
    assert!(text(&o).contains("nope.params"), "{}", text(&o));
    let o = cuzk(&["setup", "--circuit", "synthetic:banana", "--params", &params]);
    assert!(!o.status.success());
    assert!(text(&o).contains("not a number"), "{}", text(&o));
}

/// `setup --pce` from a recorded R1CS and `setup --circuit` give the same
/// bytes for the same toxic seed, and those parameters prove and verify.
#[test]
fn setup_from_a_pce_file_equals_setup_from_the_circuit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spec = "synthetic:1500:4";
    let (pce, from_pce, from_circuit, proof) = (p(d, "c.pce"), p(d, "a.params"), p(d, "b.params"), p(d, "c.proof"));
    let o = cuzk(&["pce", "build", "--circuit", spec, "--out", &pce]);
    assert!(o.status.success(), "{}", text(&o));
    let o = cuzk(&["setup", "--pce", &pce, "--toxic-seed", "7", "--params", &from_pce]);
    assert!(o.status.success(), "{}", text(&o));
    let o = cuzk(&["setup", "--circuit", spec, "--toxic-seed", "7", "--params", &from_circuit]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::read(&from_pce).unwrap() == std::fs::read(&from_circuit).unwrap(), "params differ");
    assert_eq!(std::fs::read(p(d, "a.vk")).unwrap(), std::fs::read(p(d, "b.vk")).unwrap(), "vk differs");
    let o = cuzk(&["prove", "--circuit", spec, "--params", &from_pce, "--proof", &proof]);
    assert!(o.status.success(), "{}", text(&o));
    let o = cuzk(&["verify", "--vk", &p(d, "a.vk"), "--proof", &proof]);
    assert!(o.status.success(), "{}", text(&o));
    // A corrupt PCE is refused with the reason, and no params are written.
    let mut bytes = std::fs::read(&pce).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&pce, &bytes).unwrap();
    let o = cuzk(&["setup", "--pce", &pce, "--params", &p(d, "bad.params")]);
    assert!(!o.status.success());
    assert!(text(&o).contains("checksum"), "{}", text(&o));
    assert!(!d.join("bad.params").exists());
}

#[test]
fn demo_runs_on_a_small_circuit() {
    let dir = tempfile::tempdir().unwrap();
    let o = cuzk(&["demo", "--circuit", "sha256:1", "--proofs", "2", "--workdir", &dir.path().display().to_string()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("all 2 proofs valid"), "{}", text(&o));
}

/// `pce build --kind` writes a Filecoin circuit's PCE where the daemon's
/// engine looks for it (the path `filecoin-setup --dry-run` names), and
/// `pce verify --kind` checks a file against the circuit recorded afresh.
#[cfg(feature = "filecoin")]
#[test]
fn filecoin_pce_built_ahead_where_the_engine_loads_it() {
    let dir = tempfile::tempdir().unwrap();
    let cache = p(dir.path(), "params");
    let o = cuzk(&["filecoin-setup", "--kind", "winning", "--sector-size", "2KiB", "--param-cache", &cache, "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o));
    let engine_path = text(&o).lines().find(|l| l.trim_end().ends_with(".pce")).expect("the PCE path").trim().to_string();
    let o = cuzk(&["pce", "build", "--kind", "winning", "--sector-size", "2KiB", "--param-cache", &cache]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(Path::new(&engine_path).is_file(), "{engine_path} not written: {}", text(&o));
    let o = cuzk(&["pce", "verify", &engine_path, "--kind", "winning", "--sector-size", "2KiB"]);
    assert!(o.status.success() && text(&o).contains("matches"), "{}", text(&o));
    let o = cuzk(&["pce", "verify", &engine_path, "--kind", "window", "--sector-size", "2KiB"]);
    assert!(!o.status.success() && text(&o).contains("holds circuit"), "{}", text(&o));
    let o = cuzk(&["pce", "build", "--kind", "winning", "--param-cache", &cache]);
    assert!(!o.status.success() && text(&o).contains("--sector-size"), "{}", text(&o));
    let o = cuzk(&["pce", "build", "--kind", "pore", "--sector-size", "2KiB", "--param-cache", &cache]);
    assert!(!o.status.success() && text(&o).contains("unknown kind"), "{}", text(&o));
    // Without --param-cache: the daemon's srs.param_cache, from its config.
    let other = p(dir.path(), "from-config");
    let toml = p(dir.path(), "cuzk.toml");
    std::fs::write(&toml, format!("[srs]\nparam_cache = \"{other}\"\n")).unwrap();
    let o = cuzk(&["pce", "build", "--kind", "winning", "--sector-size", "2KiB", "--daemon-config", &toml]);
    let name = Path::new(&engine_path).file_name().unwrap();
    assert!(o.status.success() && Path::new(&other).join(name).is_file(), "{}", text(&o));
    let o = cuzk(&["pce", "build", "--kind", "winning", "--sector-size", "2KiB", "--daemon-config", &p(dir.path(), "none.toml")]);
    assert!(!o.status.success() && text(&o).contains("none.toml"), "{}", text(&o));
}
