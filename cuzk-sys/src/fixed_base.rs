//! Fixed-base scalar multiplication on the device (native/fixed_base/):
//! kᵢ·g for many scalars and one base point g, given by its window table
//! (table[w·2^c + d] = d·2^(c·w)·g, as cuzk-core's `arith::fixed_base`
//! builds it). Results are Jacobian points for the caller to normalize.

use crate::error::{call, Error, ErrorCode, Result};
use crate::msm::{G1AffineRepr, G1ProjRepr, G2AffineRepr, G2ProjRepr};
use crate::{ffi, FrRepr};
use std::ffi::c_void;

type Entry = unsafe extern "C" fn(i32, *const c_void, u32, u32, *const c_void, u64, *mut c_void, *mut ffi::cuzk_error) -> i32;

fn run<A, P>(entry: Entry, device: i32, table: &[A], c: u32, windows: u32, scalars: &[FrRepr], out: &mut [P]) -> Result<()> {
    let invalid = |message: String| Err(Error { code: ErrorCode::InvalidArgument, message });
    if out.len() != scalars.len() {
        return invalid(format!("{} outputs for {} scalars", out.len(), scalars.len()));
    }
    if c == 0 || c > 24 || (windows as usize) << c != table.len() {
        return invalid(format!("a table of {} points is not {windows} windows of 2^{c}", table.len()));
    }
    call(|err| unsafe {
        entry(device, table.as_ptr().cast(), c, windows, scalars.as_ptr().cast(), scalars.len() as u64, out.as_mut_ptr().cast(), err)
    })
}

/// out[i] = scalars[i]·g in G1, for g's window table of `windows` windows of `c` bits.
pub fn fixed_base_g1(device: i32, table: &[G1AffineRepr], c: u32, windows: u32, scalars: &[FrRepr], out: &mut [G1ProjRepr]) -> Result<()> {
    run(ffi::cuzk_fixed_base_g1, device, table, c, windows, scalars, out)
}

/// out[i] = scalars[i]·g in G2, for g's window table of `windows` windows of `c` bits.
pub fn fixed_base_g2(device: i32, table: &[G2AffineRepr], c: u32, windows: u32, scalars: &[FrRepr], out: &mut [G2ProjRepr]) -> Result<()> {
    run(ffi::cuzk_fixed_base_g2, device, table, c, windows, scalars, out)
}
