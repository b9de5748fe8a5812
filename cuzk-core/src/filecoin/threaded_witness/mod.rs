//! Independent parts of a circuit (a PoRep partition's challenges, a PoSt
//! partition's sectors) synthesized on several threads:
//! - a witness ([`witness_on_threads`]), byte for byte the sequential one
//!   (aux values, public inputs, and each input's position among the aux
//!   values). Into a `WitnessOnly`, each part writes its aux values in
//!   place, into the stretch of the witness's buffer its predecessors'
//!   sizes put it at: the buffer is touched once, by the threads that
//!   fill it, and nothing is copied ([`WitnessPart`], [`in_place`]). Into
//!   any other witness generator, each part is generated apart and
//!   appended in part order, each as soon as those before it are in;
//! - a part of an extensible constraint system (our prover's assignment,
//!   the PCE recorder), appended with `extend` ([`extend_on_threads`]).
//!
//! `part`: the constraint system a part's witness is generated into.

mod part;

use crate::cs::WitnessOnly;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::Field;
pub(crate) use part::WitnessPart;
use part::Done;
use std::collections::BTreeMap;
use std::mem::MaybeUninit;
use std::sync::Mutex;

/// Synthesizes `parts` with `synth(index, part, cs)` on `threads` threads
/// into the witness `cs`. Into a `WitnessOnly` with room reserved, the
/// parts are taken as the rest of the circuit (see [`in_place`]).
pub(crate) fn witness_on_threads<P, CS, F>(cs: &mut CS, parts: Vec<P>, threads: usize, synth: F) -> Result<(), SynthesisError>
where
    P: Send,
    CS: ConstraintSystem<Fr>,
    F: Fn(usize, P, &mut WitnessPart<'_>) -> Result<(), SynthesisError> + Sync,
{
    if let Some(w) = WitnessOnly::root_of(cs) {
        return in_place(w, parts, threads, &synth);
    }
    let make = |i, part| {
        let mut own = WitnessPart::new(&mut []);
        synth(i, part, &mut own).map(|()| own.finish())
    };
    in_order_on_threads(parts, threads, make, |done| append(cs, &done))
}

/// [`witness_on_threads`] into a `WitnessOnly`: part k's aux values go
/// after k parts of the size the parts are expected to have. That size is
/// the room `w` has reserved past its aux values, shared evenly (the
/// engine reserves the PCE's shape, [`WitnessOnly::with_capacity`]: the
/// parts are the rest of the circuit); failing that (nothing reserved, or
/// not a multiple of the part count), the first part's, generated alone
/// first. Parts of equal shape (a PoRep partition's challenges, a PoSt
/// partition's sectors) fill their rooms exactly; from the first that does
/// not (a reservation that was not the circuit's: a PCE of another
/// revision), the parts are appended as they came out, which is slower
/// but the same witness.
fn in_place<P, F>(w: &mut WitnessOnly, parts: Vec<P>, threads: usize, synth: &F) -> Result<(), SynthesisError>
where
    P: Send,
    F: Fn(usize, P, &mut WitnessPart<'_>) -> Result<(), SynthesisError> + Sync,
{
    let n = parts.len();
    if n == 0 {
        return Ok(());
    }
    let reserved = w.aux_assignment.capacity() - w.aux_assignment.len();
    let mut parts = parts.into_iter().enumerate();
    let size = if reserved > 0 && reserved.is_multiple_of(n) {
        reserved / n
    } else {
        let Some((i, first)) = parts.next() else { return Ok(()) };
        let mut own = WitnessPart::new(w.aux_assignment.spare_capacity_mut());
        synth(i, first, &mut own)?;
        let first = own.finish();
        let size = first.num_aux();
        // SAFETY: the part wrote the first `in_room` values past the end.
        unsafe { append_written(w, first, (n - 1) * size) };
        size
    };
    let start = w.aux_assignment.len();
    let rooms = rooms(w.aux_assignment.spare_capacity_mut(), size, parts.len());
    let parts: Vec<_> = parts.zip(rooms).collect();
    let make = |_, ((i, part), room)| {
        let mut own = WitnessPart::new(room);
        synth(i, part, &mut own).map(|()| own.finish())
    };
    let mut done = Vec::with_capacity(parts.len());
    in_order_on_threads(parts, threads, make, |d| done.push(d))?;

    let exact = done.iter().take_while(|d| d.in_room == size && d.beyond.is_empty()).count();
    // The values of the parts from the first that missed its room, out of
    // the buffer before it moves.
    let spare = &w.aux_assignment.spare_capacity_mut()[exact * size..];
    let rest: Vec<Vec<Fr>> = done[exact..]
        .iter()
        .enumerate()
        .map(|(k, d)| {
            let room = &spare[k * size..][..d.in_room];
            // SAFETY: the part wrote the first `in_room` values of its room.
            let written = unsafe { &*(room as *const [MaybeUninit<Fr>] as *const [Fr]) };
            [written, &d.beyond].concat()
        })
        .collect();
    for (k, d) in done[..exact].iter().enumerate() {
        place_inputs(w, d, start + k * size);
    }
    // SAFETY: the first `exact` parts wrote their rooms whole, which are
    // the `exact * size` values past the end, in part order.
    unsafe { w.aux_assignment.set_len(start + exact * size) };
    for (d, values) in done[exact..].iter().zip(rest) {
        place_inputs(w, d, w.aux_assignment.len());
        w.aux_assignment.extend_from_slice(&values);
    }
    if exact < done.len() {
        log::debug!("witness parts: {exact} of {} filled the room of {size} aux values each; the others were appended", done.len());
    }
    Ok(())
}

/// The first `count` stretches of `size` values of `spare`, apart.
fn rooms(mut spare: &mut [MaybeUninit<Fr>], size: usize, count: usize) -> Vec<&mut [MaybeUninit<Fr>]> {
    (0..count)
        .map(|_| {
            let (room, rest) = std::mem::take(&mut spare).split_at_mut(size);
            spare = rest;
            room
        })
        .collect()
}

/// Appends to `w` a part written from its end on, and reserves room for
/// `more` values after it.
///
/// # Safety
/// The part's `in_room` values past `w`'s aux values are written.
unsafe fn append_written(w: &mut WitnessOnly, part: Done, more: usize) {
    let start = w.aux_assignment.len();
    place_inputs(w, &part, start);
    // SAFETY: the caller's.
    unsafe { w.aux_assignment.set_len(start + part.in_room) };
    w.aux_assignment.reserve_exact(part.beyond.len() + more);
    w.aux_assignment.extend_from_slice(&part.beyond);
}

/// A part's public inputs, its aux values from aux variable `start` on.
fn place_inputs(w: &mut WitnessOnly, part: &Done, start: usize) {
    w.input_assignment.extend_from_slice(&part.inputs);
    w.input_positions.extend(part.input_positions.iter().map(|&at| start + at));
}

/// Synthesizes `parts` with `synth(index, part, own)` on `threads` threads,
/// each into a constraint system of its own (`CS::new()` and the constant
/// one, which `extend` drops), and extends `cs` with them in order.
pub(crate) fn extend_on_threads<P, CS, F>(cs: &mut CS, parts: Vec<P>, threads: usize, synth: F) -> Result<(), SynthesisError>
where
    P: Send,
    CS: ConstraintSystem<Fr>,
    F: Fn(usize, P, &mut CS) -> Result<(), SynthesisError> + Sync,
{
    let make = |i, part| {
        let mut own = CS::new();
        own.alloc_input(|| "temp ONE", || Ok(Fr::ONE))?;
        synth(i, part, &mut own).map(|()| own)
    };
    in_order_on_threads(parts, threads, make, |own| cs.extend(&own))
}

/// Runs `make(index, part)` on `threads` threads and hands the results to
/// `take` in part order; the first error stops the parts not yet started.
pub(crate) fn in_order_on_threads<P, T, M>(parts: Vec<P>, threads: usize, make: M, mut take: impl FnMut(T)) -> Result<(), SynthesisError>
where
    P: Send,
    T: Send,
    M: Fn(usize, P) -> Result<T, SynthesisError> + Sync,
{
    let queue = Mutex::new(parts.into_iter().enumerate());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            let (tx, queue, make) = (tx.clone(), &queue, &make);
            s.spawn(move || loop {
                let Some((i, part)) = queue.lock().unwrap_or_else(|p| p.into_inner()).next() else { break };
                if tx.send((i, make(i, part))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let (mut waiting, mut next) = (BTreeMap::new(), 0);
        for (i, done) in rx {
            waiting.insert(i, done);
            while let Some(done) = waiting.remove(&next) {
                match done {
                    Ok(t) => take(t),
                    Err(e) => {
                        // The other threads stop after their part.
                        queue.lock().unwrap_or_else(|p| p.into_inner()).by_ref().for_each(drop);
                        return Err(e);
                    }
                }
                next += 1;
            }
        }
        Ok(())
    })
}

/// Appends a part generated apart (all of its aux values `beyond` an
/// empty room): its aux variables, each public input after the aux
/// variables allocated before it.
fn append<CS: ConstraintSystem<Fr>>(cs: &mut CS, part: &Done) {
    debug_assert_eq!(part.in_room, 0, "a part generated apart");
    let mut from = 0;
    for (input, &at) in part.inputs.iter().zip(&part.input_positions) {
        cs.extend_aux(&part.beyond[from..at]);
        cs.extend_inputs(std::slice::from_ref(input));
        from = at;
    }
    cs.extend_aux(&part.beyond[from..]);
}

#[cfg(test)]
mod tests;
