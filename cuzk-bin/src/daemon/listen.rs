//! The gRPC listen address (`host:port` or `unix:///path`) and the unix
//! socket file's life: its folder is created as the existing daemon does
//! (mode from the umask), a stale file is replaced, a live socket
//! (something accepts a connection) is an error, the socket gets
//! `daemon.socket_mode` (default owner and group read/write), and the file
//! is removed at shutdown.

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListenAddr {
    Tcp(String),
    Unix(PathBuf),
}

impl ListenAddr {
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if let Some(rest) = s.strip_prefix("unix:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            if !path.starts_with('/') {
                return Err(format!("listen address {s:?}: a unix socket needs an absolute path (unix:///path/to/socket)"));
            }
            return Ok(ListenAddr::Unix(PathBuf::from(path)));
        }
        let (host, port) = s.rsplit_once(':').ok_or_else(|| format!("listen address {s:?} is not host:port or unix:///path"))?;
        if host.is_empty() || port.parse::<u16>().is_err() {
            return Err(format!("listen address {s:?} is not host:port (port 0-65535) or unix:///path"));
        }
        Ok(ListenAddr::Tcp(s.to_string()))
    }

    /// The address as gRPC C-core takes it.
    pub fn grpc_target(&self) -> String {
        match self {
            ListenAddr::Tcp(hp) => hp.clone(),
            ListenAddr::Unix(p) => format!("unix://{}", p.display()),
        }
    }

    /// Readies the socket path: creates its folder and removes a stale
    /// socket file; refuses a live socket or a non-socket.
    pub fn prepare(&self) -> Result<(), String> {
        let ListenAddr::Unix(path) = self else { return Ok(()) };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create socket folder {}: {e}", dir.display()))?;
        }
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(format!("cannot inspect {}: {e}", path.display())),
        };
        if !meta.file_type().is_socket() {
            return Err(format!("{} exists and is not a socket; refusing to replace it", path.display()));
        }
        if UnixStream::connect(path).is_ok() {
            return Err(format!("{} is in use: another process accepts connections on it (another cuzk-daemon?)", path.display()));
        }
        log::info!("removing stale socket {}", path.display());
        std::fs::remove_file(path).map_err(|e| format!("cannot remove stale socket {}: {e}", path.display()))
    }

    /// Why gRPC could not bind the address (`grpc_error` says only that it
    /// failed): for TCP, the system's answer to a bind of the same address,
    /// so a port another process holds reads "address in use".
    pub fn bind_failure(&self, grpc_error: &dyn std::fmt::Display) -> String {
        let ListenAddr::Tcp(hp) = self else { return format!("cannot listen on {self}: {grpc_error}") };
        match std::net::TcpListener::bind(hp.as_str()) {
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                format!("cannot listen on {hp}: address in use (another process listens on it; another cuzk-daemon?)")
            }
            Err(e) => format!("cannot listen on {hp}: {e}"),
            Ok(_) => format!("cannot listen on {hp}: {grpc_error}"),
        }
    }

    /// Gives the bound socket its permission bits (`daemon.socket_mode`).
    pub fn set_mode(&self, mode: u32) -> Result<(), String> {
        let ListenAddr::Unix(path) = self else { return Ok(()) };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("cannot set mode {mode:04o} on {}: {e}", path.display()))
    }

    /// Removes the socket file (at shutdown).
    pub fn cleanup(&self) {
        if let ListenAddr::Unix(path) = self {
            remove_socket(path);
        }
    }
}

fn remove_socket(path: &Path) {
    match std::fs::remove_file(path) {
        Ok(()) => log::info!("removed socket {}", path.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => log::warn!("cannot remove socket {}: {e}", path.display()),
    }
}

impl std::fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListenAddr::Tcp(hp) => f.write_str(hp),
            ListenAddr::Unix(p) => write!(f, "unix://{}", p.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ListenAddr;
    use std::path::PathBuf;

    #[test]
    fn parses_both_forms() {
        assert_eq!(ListenAddr::parse("unix:///run/cuzk/cuzk.sock"), Ok(ListenAddr::Unix(PathBuf::from("/run/cuzk/cuzk.sock"))));
        assert_eq!(ListenAddr::parse("unix:/tmp/x.sock"), Ok(ListenAddr::Unix(PathBuf::from("/tmp/x.sock"))));
        assert_eq!(ListenAddr::parse("127.0.0.1:9820"), Ok(ListenAddr::Tcp("127.0.0.1:9820".into())));
        assert_eq!(ListenAddr::parse("[::1]:9820"), Ok(ListenAddr::Tcp("[::1]:9820".into())));
        assert!(ListenAddr::parse("unix://rel.sock").is_err());
        assert!(ListenAddr::parse("localhost").is_err());
        assert!(ListenAddr::parse("host:99999").is_err());
    }

    #[test]
    fn stale_socket_replaced_live_refused() {
        let dir = std::env::temp_dir().join(format!("cuzk-listen-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.sock");
        let addr = ListenAddr::Unix(path.clone());
        let live = std::os::unix::net::UnixListener::bind(&path).unwrap();
        assert!(addr.prepare().unwrap_err().contains("in use"));
        drop(live); // the file stays: now stale
        assert!(path.exists());
        addr.prepare().unwrap();
        assert!(!path.exists());
        std::fs::write(&path, b"x").unwrap();
        assert!(addr.prepare().unwrap_err().contains("not a socket"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
