//! Test harness for the daemon: tiny built-in circuits with params (and
//! .vk) in a temporary param cache, the real `cuzk-daemon` binary started
//! on a unix socket or a loopback port, a Rust gRPC client, and checks
//! that proofs are valid.

#![allow(dead_code)]

use cuzk_bin::proto as pb;
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::engine::BuiltinJob;
use cuzk_core::groth16::{generate_parameters, prepare_verifying_key, verify_proof, PreparedVerifyingKey, Proof, ToxicWaste};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The small circuit most tests prove (a few ms per proof).
pub const TINY: &str = "synthetic:1024:4";

pub enum Listen {
    Unix,
    Tcp,
}

pub struct DaemonProc {
    pub child: Child,
    /// What clients connect to: unix:///... or 127.0.0.1:port.
    pub addr: String,
    pub status_addr: Option<String>,
    pub dir: tempfile::TempDir,
    pub socket: Option<PathBuf>,
    /// The daemon's stdout: its log (as the existing daemon's, on stdout)
    /// and the lines saying where it listens.
    stdout: Arc<Stdout>,
    /// Reads the daemon's stdout into `stdout` until the daemon exits.
    reader: Option<JoinHandle<()>>,
    /// The daemon's stderr (a start-up error, a panic's message).
    stderr_file: PathBuf,
}

/// What the daemon wrote to stdout so far, and whether it closed it;
/// waiters wake at each line.
#[derive(Default)]
struct Stdout {
    state: Mutex<(String, bool)>,
    grew: Condvar,
}

impl Stdout {
    fn push(&self, line: &str) {
        let mut s = self.state.lock().unwrap();
        s.0.push_str(line);
        s.0.push('\n');
        self.grew.notify_all();
    }

    fn close(&self) {
        self.state.lock().unwrap().1 = true;
        self.grew.notify_all();
    }

    fn text(&self) -> String {
        self.state.lock().unwrap().0.clone()
    }

    /// Waits until `found(text so far)` gives a value; None when stdout
    /// closes or `timeout` passes first.
    fn wait_for<T>(&self, timeout: Duration, mut found: impl FnMut(&str) -> Option<T>) -> Option<T> {
        let deadline = Instant::now() + timeout;
        let mut s = self.state.lock().unwrap();
        loop {
            if let Some(v) = found(&s.0) {
                return Some(v);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if s.1 || left.is_zero() {
                return None;
            }
            s = self.grew.wait_timeout(s, left).unwrap().0;
        }
    }
}

/// Writes params and .vk of `circuit` into `dir` under the daemon's name.
pub fn write_params(dir: &Path, circuit: &str) -> PreparedVerifyingKey {
    let spec: CircuitSpec = circuit.parse().unwrap();
    let id = BuiltinJob::circuit_id_of(&spec);
    let params = generate_parameters(spec.blank(), &ToxicWaste::random(&mut rand_core::OsRng), None).unwrap();
    params.write_file(&dir.join(format!("{id}.params"))).unwrap();
    params.vk.write_file(&dir.join(format!("{id}.vk"))).unwrap();
    prepare_verifying_key(&params.vk)
}

pub fn config_text(dir: &Path, listen: &str, extra: &str) -> String {
    format!(
        "[daemon]\nlisten = \"{listen}\"\nstatus_listen = \"127.0.0.1:0\"\n{extra}\n\
         [srs]\nparam_cache = \"{}\"\n[memory]\ntotal_budget = \"4GiB\"\n[synthesis]\nthreads = 2\n[logging]\nlevel = \"info\"\n",
        dir.display()
    )
}

impl DaemonProc {
    /// Starts the daemon with the TINY circuit's params in its cache.
    pub fn start(listen: Listen, daemon_extra: &str) -> (Self, PreparedVerifyingKey) {
        let dir = tempfile::tempdir().unwrap();
        let pvk = write_params(dir.path(), TINY);
        (Self::start_in(dir, listen, daemon_extra), pvk)
    }

    /// [`Self::start`] with a log line as each AwaitProof call starts
    /// waiting (`rpc AwaitProof job=<id> waiting`, debug): tests act once
    /// their calls are in, not after a guessed sleep or a thread count.
    pub fn start_logging_awaits(listen: Listen, daemon_extra: &str) -> (Self, PreparedVerifyingKey) {
        let dir = tempfile::tempdir().unwrap();
        let pvk = write_params(dir.path(), TINY);
        let path = dir.path().to_path_buf();
        let d = Self::start_with(dir, listen, |l| {
            config_text(&path, l, daemon_extra).replace("level = \"info\"", "level = \"info,cuzk_bin::daemon::service=debug\"")
        });
        (d, pvk)
    }

    pub fn start_in(dir: tempfile::TempDir, listen: Listen, daemon_extra: &str) -> Self {
        Self::start_in_as(env!("CARGO_BIN_EXE_cuzk-daemon"), dir, listen, daemon_extra)
    }

    pub fn start_in_as(exe: &str, dir: tempfile::TempDir, listen: Listen, daemon_extra: &str) -> Self {
        let path = dir.path().to_path_buf();
        Self::start_as(exe, dir, listen, |listen| config_text(&path, listen, daemon_extra))
    }

    /// Starts the daemon with the config `config(listen address)` returns.
    pub fn start_with(dir: tempfile::TempDir, listen: Listen, config: impl FnOnce(&str) -> String) -> Self {
        Self::start_as(env!("CARGO_BIN_EXE_cuzk-daemon"), dir, listen, config)
    }

    /// [`Self::start_with`] on the CPU backend (`CUZK_BACKEND=cpu`), whatever
    /// devices the machine has.
    pub fn start_on_cpu(dir: tempfile::TempDir, listen: Listen, config: impl FnOnce(&str) -> String) -> Self {
        Self::start_as_with_env(env!("CARGO_BIN_EXE_cuzk-daemon"), dir, listen, &[("CUZK_BACKEND", "cpu")], config)
    }

    /// Starts `exe --config <file>` (`cuzk-daemon`, or `cuzk` without a
    /// subcommand as the existing daemon's unit runs it).
    pub fn start_as(exe: &str, dir: tempfile::TempDir, listen: Listen, config: impl FnOnce(&str) -> String) -> Self {
        Self::start_as_with_env(exe, dir, listen, &[], config)
    }

    /// [`Self::start_as`] with `env` added to the daemon's environment.
    pub fn start_as_with_env(
        exe: &str,
        dir: tempfile::TempDir,
        listen: Listen,
        env: &[(&str, &str)],
        config: impl FnOnce(&str) -> String,
    ) -> Self {
        let (listen, socket) = match listen {
            Listen::Unix => {
                let s = dir.path().join("d.sock");
                (format!("unix://{}", s.display()), Some(s))
            }
            Listen::Tcp => ("127.0.0.1:0".to_string(), None),
        };
        let cfg = dir.path().join("cuzk.toml");
        std::fs::write(&cfg, config(&listen)).unwrap();
        Self::spawn(Command::new(exe).arg("--config").arg(&cfg).envs(env.iter().copied()), dir, socket)
    }

    /// Starts `exe -l 127.0.0.1:0` without `--config`: the config is
    /// `/data/zk/cuzk.toml` where it exists, else the built-in defaults.
    pub fn start_without_config(exe: &str, dir: tempfile::TempDir) -> Self {
        Self::start_with_args(exe, &[], dir)
    }

    /// Starts `exe -l 127.0.0.1:0 args…` (the address overridden so the
    /// test owns its port).
    pub fn start_with_args(exe: &str, args: &[&str], dir: tempfile::TempDir) -> Self {
        Self::spawn(Command::new(exe).args(["-l", "127.0.0.1:0"]).args(args), dir, None)
    }

    /// Runs `cmd` (the daemon, with its arguments) until it says where it
    /// listens; `socket`: the unix socket it should remove when it stops.
    pub fn spawn(cmd: &mut Command, dir: tempfile::TempDir, socket: Option<PathBuf>) -> Self {
        let exe = cmd.get_program().to_string_lossy().into_owned();
        let stderr_file = dir.path().join("daemon.stderr");
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr_file).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("start {exe}: {e}"));
        let pipe = child.stdout.take().unwrap();
        let stdout = Arc::new(Stdout::default());
        let out = stdout.clone();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                out.push(&line);
            }
            out.close();
        });
        let line = |text: &str, prefix: &str| text.lines().find_map(|l| l.strip_prefix(prefix).map(str::to_string));
        let started = stdout.wait_for(Duration::from_secs(60), |text| {
            let addr = line(text, "cuzk-daemon listening on ")?;
            let status = line(text, "cuzk-daemon status on http://");
            (status.is_some() || text.lines().any(|l| l == "cuzk-daemon status off")).then_some((addr, status))
        });
        let Some((addr, status_addr)) = started else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("daemon did not start:\n{}{}", stdout.text(), std::fs::read_to_string(&stderr_file).unwrap_or_default());
        };
        DaemonProc { child, addr, status_addr, dir, socket, stdout, reader: Some(reader), stderr_file }
    }

    pub fn client(&self) -> pb::ProvingEngineClient {
        cuzk_bin::client::connect(&self.addr).unwrap()
    }

    /// A client allowed to send `limit` bytes (to reach the daemon's own limit).
    pub fn client_with_send_limit(&self, limit: usize) -> pb::ProvingEngineClient {
        let env = std::sync::Arc::new(grpcio::EnvBuilder::new().cq_count(1).build());
        let target = cuzk_bin::client::target(&self.addr).unwrap();
        let ch = grpcio::ChannelBuilder::new(env).max_send_message_len(limit as i32).max_receive_message_len(64 << 20).connect(&target);
        pb::ProvingEngineClient::new(ch)
    }

    /// The daemon's log so far (stdout), then its stderr.
    pub fn log(&self) -> String {
        self.stdout.text() + &std::fs::read_to_string(&self.stderr_file).unwrap_or_default()
    }

    /// What the daemon wrote to stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_file).unwrap_or_default()
    }

    /// Waits for `text` in the daemon's log (written by a thread of the
    /// daemon, it may come after the reply to the call that caused it);
    /// panics with the log when it does not come within 60 s.
    pub fn wait_log(&self, text: &str) -> String {
        self.wait_log_times(text, 1)
    }

    /// [`Self::wait_log`] until `text` is there `times` times.
    pub fn wait_log_times(&self, text: &str, times: usize) -> String {
        match self.stdout.wait_for(Duration::from_secs(60), |log| (log.matches(text).count() >= times).then(|| log.to_string())) {
            Some(log) => log,
            None => panic!("the daemon's log lacks {times} of {text:?}:\n{}", self.log()),
        }
    }

    pub fn signal(&self, sig: i32) {
        // SAFETY: sends a signal to our own child process.
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, sig) }, 0);
    }

    /// Waits for the process to exit.
    pub fn wait(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                // Its stdout is closed: the log is complete once read.
                if let Some(r) = self.reader.take() {
                    r.join().unwrap();
                }
                return s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("daemon did not exit within {timeout:?}; log:\n{}", self.log());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGTERM, clean exit, socket file removed; returns the daemon's log.
    pub fn stop(mut self) -> String {
        self.signal(libc::SIGTERM);
        let status = self.wait(Duration::from_secs(60));
        assert!(status.success(), "daemon exit {status:?}; log:\n{}", self.log());
        if let Some(s) = &self.socket {
            assert!(!s.exists(), "socket file {} left behind", s.display());
        }
        self.log()
    }

    pub fn http_get(&self, path: &str) -> (u16, String) {
        http_get(self.status_addr.as_deref().expect("status server"), path)
    }
}

impl Drop for DaemonProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A minimal HTTP/1.0 GET for the status server.
pub fn http_get(addr: &str, path: &str) -> (u16, String) {
    let (code, _, body) = http_get_with_headers(addr, path);
    (code, body)
}

/// Status code, header block and body of a GET.
pub fn http_get_with_headers(addr: &str, path: &str) -> (u16, String, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let code = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (code, head.to_string(), body.to_string())
}

/// A request for `partitions` partitions of a built-in circuit.
pub fn builtin(circuit: &str, partitions: u32, seed: u64) -> pb::SubmitProofRequest {
    pb::SubmitProofRequest { builtin: Some(pb::BuiltinCircuit { circuit: circuit.into(), partitions, seed }), ..Default::default() }
}

/// Checks every partition proof of a built-in job against the vk.
pub fn assert_valid(pvk: &PreparedVerifyingKey, circuit: &str, partitions: usize, seed: u64, proof: &[u8]) {
    let job = BuiltinJob::new(circuit.parse().unwrap(), partitions, seed);
    let proofs = Proof::many_from_bytes(proof).expect("proof bytes parse");
    assert_eq!(proofs.len(), partitions, "partition count");
    for (p, pr) in proofs.iter().enumerate() {
        assert!(verify_proof(pvk, pr, &job.public_inputs(p)).unwrap(), "partition {p} of seed {seed} is invalid");
    }
}

pub fn completed() -> i32 {
    pb::await_proof_response::Status::Completed as i32
}

/// The gRPC status code and message of a failed call.
pub fn rpc_error<T: std::fmt::Debug>(r: Result<T, grpcio::Error>) -> (grpcio::RpcStatusCode, String) {
    match r {
        Err(grpcio::Error::RpcFailure(s)) => (s.code(), s.message().to_string()),
        other => panic!("expected an RPC error, got {other:?}"),
    }
}
