//! Independent parts of a circuit (a PoRep partition's challenges, a PoSt
//! partition's sectors) synthesized on several threads and appended in
//! part order, each as soon as those before it are in, so that at most
//! about one part per thread waits in memory:
//! - a witness: each part into a `WitnessOnly` of its own, each public
//!   input appended after the aux variables that precede it in one
//!   sequential synthesis, so the result is the sequential witness byte
//!   for byte ([`witness_on_threads`]);
//! - a part of an extensible constraint system (our prover's assignment,
//!   the PCE recorder), appended with `extend` ([`extend_on_threads`]).

use crate::cs::WitnessOnly;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::Field;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Synthesizes `parts` with `synth(index, part, cs)` on `threads` threads
/// and appends their witnesses to `cs` in order.
pub(crate) fn witness_on_threads<P, CS, F>(cs: &mut CS, parts: Vec<P>, threads: usize, synth: F) -> Result<(), SynthesisError>
where
    P: Send,
    CS: ConstraintSystem<Fr>,
    F: Fn(usize, P, &mut WitnessOnly) -> Result<(), SynthesisError> + Sync,
{
    let make = |i, part| {
        let mut w = WitnessOnly::new();
        synth(i, part, &mut w).map(|()| w)
    };
    in_order_on_threads(parts, threads, make, |w| append(cs, &w))
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

/// Appends one part's witness: its aux variables, each public input after
/// the aux variables allocated before it.
fn append<CS: ConstraintSystem<Fr>>(cs: &mut CS, part: &WitnessOnly) {
    let mut from = 0;
    for (input, &at) in part.input_assignment.iter().zip(&part.input_positions) {
        cs.extend_aux(&part.aux_assignment[from..at]);
        cs.extend_inputs(std::slice::from_ref(input));
        from = at;
    }
    cs.extend_aux(&part.aux_assignment[from..]);
}
