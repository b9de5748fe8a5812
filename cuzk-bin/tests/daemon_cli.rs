//! `cuzk-daemon` start-up: config and flag handling, socket files (stale
//! replaced, live refused), and the `cuzk` client subcommands against it.

mod common;

use common::*;
use std::process::Command;
use std::time::Duration;

fn daemon(args: &[&str]) -> std::process::Output {
    run_until_exit(env!("CARGO_BIN_EXE_cuzk-daemon"), args)
}

fn run_until_exit(exe: &str, args: &[&str]) -> std::process::Output {
    let mut child = Command::new(exe).args(args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    // These runs must fail fast; a daemon that starts would hang the test.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{exe} {args:?} kept running");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn config_errors_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("bad.toml");
    std::fs::write(&cfg, "[daemon]\nstrict_config = true\nlisten = \"unix:///tmp/x.sock\"\nlisen = 1\n").unwrap();
    let o = daemon(&["-c", cfg.to_str().unwrap()]);
    assert!(stderr(&o).contains("unknown config key `lisen` in section [daemon]"), "{}", stderr(&o));

    std::fs::write(&cfg, config_text(dir.path(), "unix:///tmp/x.sock", "shutdown = \"later\"")).unwrap();
    let o = daemon(&["-c", cfg.to_str().unwrap()]);
    assert!(stderr(&o).contains("daemon.shutdown"), "{}", stderr(&o));

    std::fs::write(&cfg, config_text(dir.path(), "unix:///tmp/x.sock", "")).unwrap();
    let o = daemon(&["-c", cfg.to_str().unwrap(), "-l", "not-an-address"]);
    assert!(stderr(&o).contains("\"not-an-address\" is not host:port"), "{}", stderr(&o));
    let o = daemon(&["-c", cfg.to_str().unwrap(), "--log-level", "loud"]);
    assert!(stderr(&o).contains("logging.level"), "{}", stderr(&o));

    // A config file that exists but cannot be read stays an error.
    let o = daemon(&["-c", dir.path().to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains(&format!("cannot read config file {}", dir.path().display())), "{}", stderr(&o));

    // `cuzk` as the daemon: the same errors; daemon flags with a subcommand refused.
    let o = run_until_exit(env!("CARGO_BIN_EXE_cuzk"), &["--config", dir.path().to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cannot read config file"), "{}", stderr(&o));
    let o = run_until_exit(env!("CARGO_BIN_EXE_cuzk"), &["-c", cfg.to_str().unwrap(), "status"]);
    assert!(!o.status.success() && stderr(&o).contains("daemon flags"), "{}", stderr(&o));
}

/// The existing daemon's config file (every key it has, and what it
/// accepts by ignoring or falling back), pointed at the test's socket,
/// param cache and a free status port, with 2 threads.
fn upstream_config(dir: &std::path::Path, listen: &str) -> String {
    let text = include_str!("../../tests/data/upstream-cuzk.toml");
    let mut out = String::new();
    for line in text.lines() {
        let line = match line.split_once(" = ").map(|(k, _)| k) {
            Some("listen") => format!("listen = \"{listen}\""),
            Some("status_listen") => "status_listen = \"127.0.0.1:0\"".into(),
            Some("param_cache") => format!("param_cache = \"{}\"", dir.display()),
            Some("threads") | Some("gpu_threads") | Some("partition_workers") => format!("{} = 2", line.split_once(" = ").unwrap().0),
            _ => line.to_string(),
        };
        out += &line;
        out.push('\n');
    }
    out
}

#[test]
fn cuzk_without_subcommand_runs_the_daemon_on_an_upstream_config() {
    for listen in [Listen::Tcp, Listen::Unix] {
        let dir = tempfile::tempdir().unwrap();
        let pvk = write_params(dir.path(), TINY);
        let path = dir.path().to_path_buf();
        let d = DaemonProc::start_as(env!("CARGO_BIN_EXE_cuzk"), dir, listen, |l| upstream_config(&path, l));
        let r = d.client().prove(&cuzk_bin::proto::ProveRequest { submit: Some(builtin(TINY, 2, 7)) }).unwrap().result.unwrap();
        assert_eq!(r.status, completed(), "{}", r.error_message);
        assert_valid(&pvk, TINY, 2, 7, &r.proof);
        let log = d.log();
        for want in [
            "cuzk-daemon starting",
            "cuzk-daemon ready, serving on ",
            "unknown key daemon.key_from_a_newer_version ignored",
            "unknown section [vast_manager] ignored",
            "srs.preload is deprecated",
            "memory.total_budget = \"4G\": used 4GiB",
            "logging.format = \"pretty\"",
            "memory_budget=4GiB",
            "DEBUG cuzk_core",
            // Honoured here, ignored by the existing daemon: said at start.
            "WARN  cuzk_bin::daemon::process: config synthesis.partition_workers = 2: 2 partitions synthesized at once; the existing daemon ignored this key",
        ] {
            assert!(log.contains(want), "log lacks {want:?}:\n{log}");
        }
        let (code, body) = d.http_get("/status");
        assert_eq!(code, 200, "{body}");
        let log = d.stop();
        assert!(log.contains("cuzk-daemon stopped"), "{log}");
    }
}

/// Without `--config` and without `/data/zk/cuzk.toml` the daemon starts
/// on the built-in defaults (here with `-l` for the address: the default
/// socket is under /run/curio) and proves.
#[test]
fn cuzk_without_a_config_file_runs_on_the_defaults() {
    if std::path::Path::new(cuzk_bin::daemon::process::DEFAULT_CONFIG).exists() {
        eprintln!(
            "SKIPPED cuzk_without_a_config_file_runs_on_the_defaults: this machine has a {}",
            cuzk_bin::daemon::process::DEFAULT_CONFIG
        );
        return;
    }
    let d = DaemonProc::start_without_config(env!("CARGO_BIN_EXE_cuzk"), tempfile::tempdir().unwrap());
    // The default param cache has no file of this circuit: its SRS is
    // generated, so the proof is checked by its size only.
    let r = d.client().prove(&cuzk_bin::proto::ProveRequest { submit: Some(builtin(TINY, 2, 9)) }).unwrap().result.unwrap();
    assert_eq!(r.status, completed(), "{}", r.error_message);
    assert_eq!(r.proof.len(), 2 * 192);
    let log = d.stop();
    for want in
        ["no config file at /data/zk/cuzk.toml: built-in defaults", "cuzk-daemon ready, serving on 127.0.0.1:", "cuzk-daemon stopped"]
    {
        assert!(log.contains(want), "log lacks {want:?}:\n{log}");
    }
}

/// A config file named with `--config` that does not exist: the daemon
/// runs on the built-in defaults, as the existing one does, with a warning
/// naming the file (it does not exit, which under systemd's
/// Restart=on-failure would only loop). Both binaries, both flag spellings.
#[test]
fn a_missing_named_config_runs_on_the_defaults_with_a_warning() {
    for (exe, flag) in [(env!("CARGO_BIN_EXE_cuzk"), "--config"), (env!("CARGO_BIN_EXE_cuzk-daemon"), "-c")] {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-cuzk.toml");
        let d = DaemonProc::start_with_args(exe, &[flag, missing.to_str().unwrap()], dir);
        let r = d.client().prove(&cuzk_bin::proto::ProveRequest { submit: Some(builtin(TINY, 1, 4)) }).unwrap().result.unwrap();
        assert_eq!(r.status, completed(), "{}", r.error_message);
        let log = d.wait_log("cuzk-daemon ready");
        let want =
            format!("WARN  cuzk_bin::daemon::process: config file {} does not exist: running on the built-in defaults", missing.display());
        assert!(log.contains(&want), "{exe}: log lacks {want:?}:\n{log}");
        // The log is on stdout, as the existing daemon's: stderr stays empty.
        assert_eq!(d.stderr(), "", "{exe}");
        d.stop();
    }
}

#[test]
fn live_socket_is_refused() {
    let (d, _) = DaemonProc::start(Listen::Unix, "");
    let cfg = d.dir.path().join("cuzk.toml");
    // A second daemon on the same socket: refused, and the first keeps it.
    let o = daemon(&["-c", cfg.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("is in use"), "{}", stderr(&o));
    d.client().get_status(&cuzk_bin::proto::GetStatusRequest {}).expect("first daemon still serves");
    d.stop();
}

/// gRPC's default SO_REUSEPORT let a second daemon share the port (and
/// half the connections); it must fail at start, as on a unix socket.
#[test]
fn tcp_port_in_use_is_refused() {
    let (d, _) = DaemonProc::start(Listen::Tcp, "");
    let cfg = d.dir.path().join("cuzk.toml");
    let o = daemon(&["-c", cfg.to_str().unwrap(), "-l", &d.addr]);
    assert!(!o.status.success(), "a second daemon started on {}: {}", d.addr, stderr(&o));
    let want = format!("cannot listen on {}: address in use", d.addr);
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
    d.client().get_status(&cuzk_bin::proto::GetStatusRequest {}).expect("first daemon still serves");
    d.stop();
}

#[test]
fn listen_flag_overrides_config_and_stale_file_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    write_params(dir.path(), TINY);
    let sock = dir.path().join("other.sock");
    drop(std::os::unix::net::UnixListener::bind(&sock).unwrap()); // stale
    let cfg = dir.path().join("cuzk.toml");
    std::fs::write(&cfg, config_text(dir.path(), "127.0.0.1:1", "")).unwrap();
    let addr = format!("unix://{}", sock.display());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuzk-daemon"));
    cmd.args(["-c", cfg.to_str().unwrap(), "-l", &addr, "--log-level", "debug"]);
    let vk = dir.path().join("builtin-synthetic-1024-4.vk");
    let mut d = DaemonProc::spawn(&mut cmd, dir, Some(sock.clone()));
    assert_eq!(d.addr, addr);

    // The client subcommands against it.
    let cuzk = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_cuzk")).args(args).env("CUZK_ADDR", &addr).output().unwrap();
        (o.status.success(), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
    };
    let vk = vk.to_str().unwrap();
    let (ok, out) = cuzk(&["single", "-t", "builtin", "--circuit", TINY, "--partitions", "2", "--vk", vk]);
    assert!(ok && out.contains("COMPLETED") && out.contains("valid"), "{out}");
    let (ok, out) = cuzk(&["batch", "-t", "builtin", "--circuit", TINY, "-c", "6", "-j", "3", "--vk", vk]);
    assert!(ok && out.contains("completed:     6") && out.contains("proofs/min"), "{out}");
    let (ok, out) = cuzk(&["preload", "-c", "builtin-synthetic-1024-4"]);
    assert!(ok && out.contains("already loaded"), "{out}");
    let (ok, out) = cuzk(&["status"]);
    assert!(ok && out.contains("proofs completed  7"), "{out}");
    let (ok, out) = cuzk(&["metrics"]);
    assert!(ok && out.contains("cuzk_jobs_completed_total 7"), "{out}");
    let (ok, out) = cuzk(&["single", "-t", "porep"]);
    assert!(!ok && out.contains("--c1 FILE is required"), "{out}");

    // SIGINT stops it as well.
    d.signal(libc::SIGINT);
    assert!(d.wait(Duration::from_secs(60)).success(), "{}", d.log());
    assert!(!sock.exists());
}

/// Runs build/install.sh with `args` and the environment `env`; its output.
fn install_sh(args: &[&str], env: &[(&str, &std::path::Path)]) -> String {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../build/install.sh");
    let o = Command::new(&script).args(args).env_remove("PREFIX").envs(env.iter().copied()).output().unwrap();
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(o.status.success(), "install.sh {args:?}: {out}");
    out
}

#[test]
fn install_script_into_a_prefix_then_cuzk_config_serves() {
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_cuzk"));
    // <target>/release/cuzk: install what this test run built.
    let target = exe.parent().and_then(|p| p.parent()).unwrap();
    let prefix = tempfile::tempdir().unwrap();
    let out = install_sh(&["--no-build", "--prefix", prefix.path().to_str().unwrap()], &[("CARGO_TARGET_DIR", target)]);
    // It never writes a config, and says what it found.
    assert!(out.contains("kept as it is") || out.contains("cuzk.example.toml /data/zk/cuzk.toml"), "{out}");
    for f in ["bin/cuzk", "bin/cuzk-daemon", "bin/cuzk-bench", "share/cuzk/cuzk.example.toml", "share/cuzk/cuzk.service"] {
        assert!(prefix.path().join(f).is_file(), "{f} not installed");
    }
    let bench = Command::new(prefix.path().join("bin/cuzk-bench")).arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&bench.stdout).contains("http://127.0.0.1:9820"), "cuzk-bench takes the existing tool's form");
    let dir = tempfile::tempdir().unwrap();
    let pvk = write_params(dir.path(), TINY);
    let installed = prefix.path().join("bin/cuzk");
    let d = DaemonProc::start_in_as(installed.to_str().unwrap(), dir, Listen::Unix, "");
    let r = d.client().prove(&cuzk_bin::proto::ProveRequest { submit: Some(builtin(TINY, 1, 3)) }).unwrap().result.unwrap();
    assert_eq!(r.status, completed(), "{}", r.error_message);
    assert_valid(&pvk, TINY, 1, 3, &r.proof);
    d.stop();

    // --help: the header comment, no line of the script.
    let help = install_sh(&["--help"], &[]);
    assert!(help.contains("--no-build") && !help.contains("set -e") && !help.contains('#'), "{help}");

    // PREFIX from the environment; a target folder with cuzk alone (as
    // build/demo.sh leaves it): cuzk-daemon is a link to cuzk, and serves.
    let only = tempfile::tempdir().unwrap();
    std::fs::create_dir(only.path().join("release")).unwrap();
    std::fs::copy(exe, only.path().join("release/cuzk")).unwrap();
    let prefix = tempfile::tempdir().unwrap();
    let out = install_sh(&["--no-build"], &[("CARGO_TARGET_DIR", only.path()), ("PREFIX", prefix.path())]);
    let linked = prefix.path().join("bin/cuzk-daemon");
    assert_eq!(std::fs::read_link(&linked).ok(), Some("cuzk".into()), "{out}");
    let dir = tempfile::tempdir().unwrap();
    let pvk = write_params(dir.path(), TINY);
    let d = DaemonProc::start_in_as(linked.to_str().unwrap(), dir, Listen::Unix, "");
    let r = d.client().prove(&cuzk_bin::proto::ProveRequest { submit: Some(builtin(TINY, 1, 6)) }).unwrap().result.unwrap();
    assert_valid(&pvk, TINY, 1, 6, &r.proof);
    d.stop();
}

#[test]
fn socket_folder_created_and_socket_mode_applied() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let pvk = write_params(dir.path(), TINY);
    let run = tempfile::tempdir().unwrap();
    let sock = run.path().join("run/curio/cuzk.sock");
    let (path, listen) = (dir.path().to_path_buf(), format!("unix://{}", sock.display()));
    let d = DaemonProc::start_as(env!("CARGO_BIN_EXE_cuzk"), dir, Listen::Tcp, |_| config_text(&path, &listen, "socket_mode = 0o600"));
    assert_eq!(d.addr, listen);
    assert_eq!(std::fs::metadata(&sock).unwrap().permissions().mode() & 0o777, 0o600);
    let r = d.client().prove(&cuzk_bin::proto::ProveRequest { submit: Some(builtin(TINY, 1, 5)) }).unwrap().result.unwrap();
    assert_valid(&pvk, TINY, 1, 5, &r.proof);
    d.stop();
    assert!(!sock.exists() && sock.parent().unwrap().is_dir());
}
