//! The constraint system one part of a witness is generated into on its
//! own thread: its aux values go straight into its room, the stretch of
//! the destination witness's buffer that a part of its expected size takes
//! (the buffer's first touch, and no copy afterwards); values past the
//! room's end are kept apart, so that a part larger than expected is still
//! whole. Its public inputs are kept apart with their positions relative to
//! the part (the aux values allocated before each), to be placed once the
//! parts before it are.

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use std::mem::MaybeUninit;

pub(crate) struct WitnessPart<'a> {
    /// Where the part's first aux values go.
    room: &'a mut [MaybeUninit<Fr>],
    /// Its witness so far (`done.in_room` of `room`'s first values
    /// written).
    done: Done,
}

/// A part's witness once generated, apart from what it wrote in its room.
#[derive(Default)]
pub(super) struct Done {
    /// How many of its room's first values the part wrote (its room was
    /// filled before any value went to `beyond`).
    pub(super) in_room: usize,
    /// Aux values past the room's end.
    pub(super) beyond: Vec<Fr>,
    pub(super) inputs: Vec<Fr>,
    /// For each input, the part's aux values allocated before it.
    pub(super) input_positions: Vec<usize>,
}

impl Done {
    /// The part's aux variables.
    pub(super) fn num_aux(&self) -> usize {
        self.in_room + self.beyond.len()
    }
}

impl<'a> WitnessPart<'a> {
    /// A part that writes its first aux values into `room` (empty: all of
    /// them kept apart).
    pub(super) fn new(room: &'a mut [MaybeUninit<Fr>]) -> Self {
        WitnessPart { room, done: Done::default() }
    }

    /// The part's witness, its room released: the room's first
    /// `Done::in_room` values are written.
    pub(super) fn finish(self) -> Done {
        self.done
    }
}

impl ConstraintSystem<Fr> for WitnessPart<'_> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let value = f()?;
        match self.room.get_mut(self.done.in_room) {
            Some(slot) => {
                slot.write(value);
                self.done.in_room += 1;
            }
            None => self.done.beyond.push(value),
        }
        Ok(Variable::new_unchecked(Index::Aux(self.done.num_aux() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.done.inputs.push(f()?);
        self.done.input_positions.push(self.done.num_aux());
        Ok(Variable::new_unchecked(Index::Input(self.done.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }

    fn is_witness_generator(&self) -> bool {
        true
    }

    fn extend_inputs(&mut self, new_inputs: &[Fr]) {
        let at = self.done.num_aux();
        self.done.input_positions.extend(std::iter::repeat_n(at, new_inputs.len()));
        self.done.inputs.extend_from_slice(new_inputs);
    }

    // The witness gadgets hand over their values in batches.
    fn extend_aux(&mut self, new_aux: &[Fr]) {
        let free = &mut self.room[self.done.in_room..];
        let n = free.len().min(new_aux.len());
        for (slot, &value) in free.iter_mut().zip(&new_aux[..n]) {
            slot.write(value);
        }
        self.done.in_room += n;
        self.done.beyond.extend_from_slice(&new_aux[n..]);
    }

    // No `aux_slice`, `inputs_slice` or `allocate_empty*` (bellpepper's
    // defaults panic): a part's values are not one slice, and no gadget
    // asks for them (a `Namespace` does not even pass the latter on).
}
