//! Witness-only synthesis: allocation closures run, constraints are not
//! evaluated. Fast witness generation for callers that only need values.

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use std::any::TypeId;
use std::marker::PhantomData;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct WitnessOnly {
    /// Public inputs, the constant one first.
    pub input_assignment: Vec<Fr>,
    /// Private (auxiliary) variables.
    pub aux_assignment: Vec<Fr>,
    /// For each input, the number of aux variables allocated before it:
    /// the allocation order a pre-compiled constraint system checks.
    pub input_positions: Vec<usize>,
}

impl WitnessOnly {
    /// An empty witness with room for the variables a circuit is known to
    /// allocate (its PCE's shape): the aux vector, a partition's largest
    /// buffer, is reserved once at its size instead of regrown by doubling.
    pub fn with_capacity(num_inputs: usize, num_aux: usize) -> Self {
        WitnessOnly {
            input_assignment: Vec::with_capacity(num_inputs),
            aux_assignment: Vec::with_capacity(num_aux),
            input_positions: Vec::with_capacity(num_inputs),
        }
    }

    /// The witness `cs` generates into, when `cs` is a `WitnessOnly` (or a
    /// namespace of one): a circuit's synthesis, generic over its
    /// constraint system, can then write into the witness's buffers
    /// directly (a PoRep partition's challenges, each on its own thread,
    /// in place).
    pub fn root_of<CS: ConstraintSystem<Fr>>(cs: &mut CS) -> Option<&mut WitnessOnly> {
        if type_id_of::<CS::Root>() != TypeId::of::<WitnessOnly>() {
            return None;
        }
        let root: *mut CS::Root = cs.get_root();
        // SAFETY: `CS::Root` has `WitnessOnly`'s type id, lifetimes aside,
        // and `WitnessOnly` has no lifetime parameter: it is `WitnessOnly`.
        Some(unsafe { &mut *root.cast::<WitnessOnly>() })
    }
}

/// `TypeId::of::<T>()` for any `T`, `'static` or not (a constraint system
/// has no `'static` bound): the type id of `T` with its lifetimes erased,
/// the way the `typeid` crate obtains it.
fn type_id_of<T: ?Sized>() -> TypeId {
    trait Erased {
        fn id(&self) -> TypeId
        where
            Self: 'static;
    }
    impl<T: ?Sized> Erased for PhantomData<T> {
        fn id(&self) -> TypeId
        where
            Self: 'static,
        {
            TypeId::of::<T>()
        }
    }
    let marker = PhantomData::<T>;
    // SAFETY: only the trait object's lifetime bound changes; the method
    // reads nothing through it, and type ids do not depend on lifetimes.
    let erased = unsafe { std::mem::transmute::<&dyn Erased, &(dyn Erased + 'static)>(&marker) };
    erased.id()
}

impl ConstraintSystem<Fr> for WitnessOnly {
    type Root = Self;

    fn new() -> Self {
        Self::default()
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux_assignment.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.aux_assignment.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.input_assignment.push(f()?);
        self.input_positions.push(self.aux_assignment.len());
        Ok(Variable::new_unchecked(Index::Input(self.input_assignment.len() - 1)))
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
        self.input_positions.extend(std::iter::repeat_n(self.aux_assignment.len(), new_inputs.len()));
        self.input_assignment.extend_from_slice(new_inputs);
    }

    fn extend_aux(&mut self, new_aux: &[Fr]) {
        self.aux_assignment.extend_from_slice(new_aux);
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Fr], &mut [Fr]) {
        let a0 = self.aux_assignment.len();
        self.aux_assignment.resize(a0 + aux_n, Fr::default());
        self.input_positions.extend(std::iter::repeat_n(self.aux_assignment.len(), inputs_n));
        let i0 = self.input_assignment.len();
        self.input_assignment.resize(i0 + inputs_n, Fr::default());
        (&mut self.aux_assignment[a0..], &mut self.input_assignment[i0..])
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Fr] {
        self.input_positions.extend(std::iter::repeat_n(self.aux_assignment.len(), n));
        let i0 = self.input_assignment.len();
        self.input_assignment.resize(i0 + n, Fr::default());
        &mut self.input_assignment[i0..]
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Fr] {
        let a0 = self.aux_assignment.len();
        self.aux_assignment.resize(a0 + n, Fr::default());
        &mut self.aux_assignment[a0..]
    }

    fn inputs_slice(&self) -> &[Fr] {
        &self.input_assignment
    }

    fn aux_slice(&self) -> &[Fr] {
        &self.aux_assignment
    }
}

#[cfg(test)]
mod tests {
    use super::WitnessOnly;
    use bellpepper::util_cs::witness_cs::WitnessCS;
    use bellpepper_core::ConstraintSystem;
    use blstrs::Scalar as Fr;

    #[test]
    fn root_of_finds_a_witness_only_behind_namespaces_and_references() {
        let mut w = WitnessOnly::new();
        w.alloc(|| "a", || Ok(Fr::from(3))).unwrap();
        let at = &w as *const WitnessOnly;
        assert!(WitnessOnly::root_of(&mut w).is_some_and(|r| std::ptr::eq(r, at)));
        let mut ns = w.namespace(|| "outer");
        let mut inner = ns.namespace(|| "inner");
        assert!(WitnessOnly::root_of(&mut inner).is_some_and(|r| std::ptr::eq(r, at)));
        drop(inner);
        drop(ns);
        let mut by_ref = &mut w;
        assert!(WitnessOnly::root_of(&mut by_ref).is_some_and(|r| r.aux_assignment == [Fr::from(3)]));
        assert!(WitnessOnly::root_of(&mut WitnessCS::<Fr>::new()).is_none(), "another witness generator");
    }
}
