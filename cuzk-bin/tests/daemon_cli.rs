//! `cuzk-daemon` start-up: config and flag handling, socket files (stale
//! replaced, live refused), and the `cuzk` client subcommands against it.

mod common;

use common::*;
use std::process::Command;
use std::time::Duration;

fn daemon(args: &[&str]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cuzk-daemon"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // These runs must fail fast; a daemon that starts would hang the test.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("cuzk-daemon {args:?} kept running");
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
    let o = daemon(&["-c", "/nonexistent/cuzk.toml"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cannot read config file /nonexistent/cuzk.toml"), "{}", stderr(&o));

    let cfg = dir.path().join("bad.toml");
    std::fs::write(&cfg, "[daemon]\nlisten = \"unix:///tmp/x.sock\"\nlisen = 1\n").unwrap();
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

#[test]
fn listen_flag_overrides_config_and_stale_file_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    write_params(dir.path(), TINY);
    let sock = dir.path().join("other.sock");
    drop(std::os::unix::net::UnixListener::bind(&sock).unwrap()); // stale
    let cfg = dir.path().join("cuzk.toml");
    std::fs::write(&cfg, config_text(dir.path(), "127.0.0.1:1", "")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cuzk-daemon"))
        .args(["-c", cfg.to_str().unwrap(), "-l", &format!("unix://{}", sock.display()), "--log-level", "debug"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert_eq!(line.trim(), format!("cuzk-daemon listening on unix://{}", sock.display()));
    let addr = format!("unix://{}", sock.display());

    // The client subcommands against it.
    let cuzk = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_cuzk")).args(args).env("CUZK_ADDR", &addr).output().unwrap();
        (o.status.success(), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
    };
    let vk = dir.path().join("builtin-synthetic-1024-4.vk");
    let vk = vk.to_str().unwrap();
    let (ok, out) = cuzk(&["single", "-t", "builtin", "--circuit", TINY, "--partitions", "2", "--vk", vk]);
    assert!(ok && out.contains("COMPLETED") && out.contains("valid"), "{out}");
    let (ok, out) = cuzk(&["batch", "-t", "builtin", "--circuit", TINY, "-c", "6", "-j", "3", "--vk", vk]);
    assert!(ok && out.contains("completed 6 / 6") && out.contains("proofs/min"), "{out}");
    let (ok, out) = cuzk(&["preload", "-c", "builtin-synthetic-1024-4"]);
    assert!(ok && out.contains("already loaded"), "{out}");
    let (ok, out) = cuzk(&["status"]);
    assert!(ok && out.contains("proofs completed  7"), "{out}");
    let (ok, out) = cuzk(&["metrics"]);
    assert!(ok && out.contains("cuzk_jobs_completed_total 7"), "{out}");
    let (ok, out) = cuzk(&["single", "-t", "porep"]);
    assert!(!ok && out.contains("--c1 FILE is required"), "{out}");

    // SIGINT stops it as well.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert!(child.wait().unwrap().success());
    assert!(!sock.exists());
    drop(stdout);
}
