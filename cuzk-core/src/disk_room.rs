//! Room on disk for the large files cuzk writes (`.params`, `.pce`):
//! checked before writing, so a setup or a PCE save that would fill the
//! disk fails at once with the sizes, not with ENOSPC after minutes of
//! work and a partial file taking the room others need.

use std::io;
use std::path::Path;

/// Bytes free to an unprivileged writer on the filesystem holding `dir`.
pub fn free_bytes(dir: &Path) -> io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: a NUL-terminated path and a zeroed out-parameter of the
    // type statvfs fills.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(s.f_bavail as u64 * s.f_frsize as u64)
}

/// The folder `path` is written into.
fn folder(path: &Path) -> &Path {
    path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Ok where `what` (up to `needs` bytes) fits beside the files already in
/// `path`'s filesystem; else a `StorageFull` error naming both sizes.
pub fn ensure_room(path: &Path, what: &str, needs: u64) -> io::Result<()> {
    check_room(path, what, needs, free_bytes(folder(path))?)
}

fn check_room(path: &Path, what: &str, needs: u64, free: u64) -> io::Result<()> {
    if needs <= free {
        return Ok(());
    }
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    Err(io::Error::new(
        io::ErrorKind::StorageFull,
        format!("{what} needs up to {:.1} GiB ({needs} bytes) and {} has {:.1} GiB free", gib(needs), folder(path).display(), gib(free)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_does_not_fit_is_refused_with_both_sizes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.params");
        assert!(free_bytes(dir.path()).unwrap() > 0);
        check_room(&path, "the .params file", 10, 10).unwrap();
        let err = check_room(&path, "the .params file", 3 << 30, 1 << 30).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
        let msg = err.to_string();
        assert!(msg.contains("the .params file needs up to 3.0 GiB") && msg.contains("1.0 GiB free"), "{msg}");
        assert!(msg.contains(&dir.path().display().to_string()), "{msg}");
        // No disk holds an exabyte.
        assert_eq!(ensure_room(&path, "the .params file", 1 << 60).unwrap_err().kind(), io::ErrorKind::StorageFull);
        ensure_room(&path, "the .params file", 1).unwrap();
    }
}
