//! A witness generated on several threads from independent parts of a
//! circuit (a PoRep partition's challenges, a PoSt partition's sectors):
//! each part is synthesized into a `WitnessOnly` of its own on a thread and
//! appended in part order, each public input after the aux variables that
//! precede it in one sequential synthesis, so the result is the sequential
//! witness byte for byte.

use crate::cs::WitnessOnly;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Synthesizes `parts` with `synth(index, part, cs)` on `threads` threads
/// and appends their witnesses to `cs` in order, each as soon as those
/// before it are in (so at most about one part per thread waits in memory).
pub(crate) fn witness_on_threads<P, CS, F>(cs: &mut CS, parts: Vec<P>, threads: usize, synth: F) -> Result<(), SynthesisError>
where
    P: Send,
    CS: ConstraintSystem<Fr>,
    F: Fn(usize, P, &mut WitnessOnly) -> Result<(), SynthesisError> + Sync,
{
    let queue = Mutex::new(parts.into_iter().enumerate());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        for _ in 0..threads {
            let (tx, queue, synth) = (tx.clone(), &queue, &synth);
            s.spawn(move || loop {
                let Some((i, part)) = queue.lock().unwrap_or_else(|p| p.into_inner()).next() else { break };
                let mut w = WitnessOnly::new();
                let done = synth(i, part, &mut w).map(|()| w);
                if tx.send((i, done)).is_err() {
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
                    Ok(w) => append(cs, &w),
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
