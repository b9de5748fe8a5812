//! Writing `.params` and `.vk` files (points encoded in parallel).

use super::{Parameters, VerifyingKey};
use blstrs::{G1Affine, G2Affine};
use std::io::{self, Write};
use std::path::Path;

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
    let count = u32::try_from(points.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "more than 2^32-1 points in one section"))?;
    w.write_all(&count.to_be_bytes())?;
    // Encode in slabs so a multi-GB section never doubles memory.
    for slab in points.chunks(1 << 20) {
        let mut buf = vec![0u8; slab.len() * P::SIZE];
        crate::par::for_each_chunk_mut(&mut buf, 1024 * P::SIZE, |off, chunk| {
            let first = off / P::SIZE;
            for (k, out) in chunk.chunks_mut(P::SIZE).enumerate() {
                slab[first + k].encode_into(out);
            }
        });
        w.write_all(&buf)?;
    }
    Ok(())
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

/// Writes to `path.tmp` and renames, so a crash never leaves a truncated
/// file under the final name.
fn write_atomically(path: &Path, f: impl FnOnce(&mut io::BufWriter<std::fs::File>) -> io::Result<()>) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let mut w = io::BufWriter::with_capacity(1 << 22, std::fs::File::create(&tmp)?);
    f(&mut w)?;
    w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, path)
}
