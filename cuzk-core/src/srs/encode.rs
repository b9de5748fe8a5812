//! Writing `.params` and `.vk` files (points encoded in parallel).

use super::{Parameters, VerifyingKey};
use blstrs::{G1Affine, G2Affine};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

trait Encode: Sync {
    const SIZE: usize;
    fn encode_into(&self, out: &mut [u8]);
}

impl Encode for G1Affine {
    const SIZE: usize = 96;
    fn encode_into(&self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_uncompressed());
    }
}

impl Encode for G2Affine {
    const SIZE: usize = 192;
    fn encode_into(&self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_uncompressed());
    }
}

fn write_points<P: Encode, W: Write>(w: &mut W, points: &[P]) -> io::Result<()> {
    write_count(w, points.len())?;
    // Encode in slabs so a multi-GB section never doubles memory.
    for slab in points.chunks(1 << 20) {
        write_slab(w, slab)?;
    }
    Ok(())
}

/// A section's u32 big-endian point count.
fn write_count<W: Write>(w: &mut W, n: usize) -> io::Result<()> {
    let count = u32::try_from(n).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "more than 2^32-1 points in one section"))?;
    w.write_all(&count.to_be_bytes())
}

/// Points, encoded in parallel.
fn write_slab<P: Encode, W: Write>(w: &mut W, slab: &[P]) -> io::Result<()> {
    let mut buf = vec![0u8; slab.len() * P::SIZE];
    crate::par::for_each_chunk_mut(&mut buf, 1024 * P::SIZE, |off, chunk| {
        let first = off / P::SIZE;
        for (k, out) in chunk.chunks_mut(P::SIZE).enumerate() {
            slab[first + k].encode_into(out);
        }
    });
    w.write_all(&buf)
}

impl VerifyingKey {
    pub fn write<W: Write>(&self, mut w: W) -> io::Result<()> {
        w.write_all(&self.alpha_g1.to_uncompressed())?;
        w.write_all(&self.beta_g1.to_uncompressed())?;
        w.write_all(&self.beta_g2.to_uncompressed())?;
        w.write_all(&self.gamma_g2.to_uncompressed())?;
        w.write_all(&self.delta_g1.to_uncompressed())?;
        w.write_all(&self.delta_g2.to_uncompressed())?;
        write_points(&mut w, &self.ic)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write(&mut out).expect("writing to a Vec cannot fail");
        out
    }

    pub fn write_file(&self, path: &Path) -> io::Result<()> {
        write_atomically(path, |w| self.write(w))
    }
}

impl Parameters {
    pub fn write<W: Write>(&self, mut w: W) -> io::Result<()> {
        self.vk.write(&mut w)?;
        write_points(&mut w, &self.h)?;
        write_points(&mut w, &self.l)?;
        write_points(&mut w, &self.a)?;
        write_points(&mut w, &self.b_g1)?;
        write_points(&mut w, &self.b_g2)
    }

    pub fn write_file(&self, path: &Path) -> io::Result<()> {
        write_atomically(path, |w| self.write(w))
    }
}

/// The section lengths of a `.params` file, and so its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamsLayout {
    pub ic: usize,
    pub h: usize,
    pub l: usize,
    pub a: usize,
    /// B_G1's and B_G2's (the same variables).
    pub b: usize,
}

impl ParamsLayout {
    /// Bytes of the file: the verifying key (three G1 and three G2 points
    /// besides its counted IC), then five counted sections.
    pub fn file_bytes(&self) -> u64 {
        let (g1, g2, count) = (<G1Affine as Encode>::SIZE as u64, <G2Affine as Encode>::SIZE as u64, 4u64);
        let vk = 3 * g1 + 3 * g2 + count + self.ic as u64 * g1;
        vk + 5 * count + (self.h + self.l + self.a + self.b) as u64 * g1 + self.b as u64 * g2
    }
}

/// A `.params` file written as its points are computed, for setups too
/// large to hold: the verifying key, then each section's count and its
/// points in slabs, in file order. Written to `path.tmp` and renamed into
/// place by [`ParamsStream::finish`]; dropped unfinished, the temporary
/// file is removed.
pub struct ParamsStream {
    w: Option<io::BufWriter<std::fs::File>>,
    tmp: PathBuf,
    path: PathBuf,
}

impl ParamsStream {
    pub fn create(path: &Path) -> io::Result<Self> {
        let tmp = tmp_path(path);
        let w = io::BufWriter::with_capacity(1 << 22, std::fs::File::create(&tmp)?);
        Ok(Self { w: Some(w), tmp, path: path.to_path_buf() })
    }

    /// [`ParamsStream::create`], where a file of up to `layout`'s size fits
    /// on the filesystem; otherwise a `StorageFull` error that says how
    /// much it needs and how much is free.
    pub fn create_with_room(path: &Path, layout: &ParamsLayout) -> io::Result<Self> {
        crate::disk_room::ensure_room(path, "the .params file", layout.file_bytes())?;
        Self::create(path)
    }

    fn writer(&mut self) -> &mut io::BufWriter<std::fs::File> {
        self.w.as_mut().expect("a ParamsStream is written until finished")
    }

    pub fn vk(&mut self, vk: &VerifyingKey) -> io::Result<()> {
        vk.write(self.writer())
    }

    /// Starts the next section (H, L, A, B_G1, B_G2) of `len` points.
    pub fn section(&mut self, len: usize) -> io::Result<()> {
        write_count(self.writer(), len)
    }

    pub fn g1(&mut self, points: &[G1Affine]) -> io::Result<()> {
        write_slab(self.writer(), points)
    }

    pub fn g2(&mut self, points: &[G2Affine]) -> io::Result<()> {
        write_slab(self.writer(), points)
    }

    /// Flushes, syncs and renames the file into place.
    pub fn finish(mut self) -> io::Result<()> {
        let w = self.w.take().expect("finished once");
        let done = w.into_inner().map_err(|e| e.into_error()).and_then(|f| f.sync_all());
        let done = done.and_then(|()| std::fs::rename(&self.tmp, &self.path));
        if done.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        done
    }
}

impl Drop for ParamsStream {
    fn drop(&mut self) {
        if self.w.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

fn tmp_path(path: &Path) -> PathBuf {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    PathBuf::from(tmp)
}

/// Writes to `path.tmp` and renames, so a crash never leaves a truncated
/// file under the final name.
fn write_atomically(path: &Path, f: impl FnOnce(&mut io::BufWriter<std::fs::File>) -> io::Result<()>) -> io::Result<()> {
    let tmp = tmp_path(path);
    let mut w = io::BufWriter::with_capacity(1 << 22, std::fs::File::create(&tmp)?);
    f(&mut w)?;
    w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_params_file_that_does_not_fit_is_never_started() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.params");
        // 2^40 points: no disk holds them.
        let huge = ParamsLayout { ic: 1, h: 1 << 40, l: 0, a: 0, b: 0 };
        let err = ParamsStream::create_with_room(&path, &huge).err().expect("refused");
        assert_eq!(err.kind(), io::ErrorKind::StorageFull, "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
