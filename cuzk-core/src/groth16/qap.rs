//! R1CS → QAP at a point: records the constraint matrices of a circuit and
//! evaluates each variable's A, B, C polynomials at τ through the Lagrange
//! basis of the NTT domain (one inverse NTT of the powers of τ).

use crate::ntt::{Domain, NttError};
use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use ff::Field;

/// One non-zero matrix entry: row (constraint), column (variable), value.
#[derive(Clone, Copy)]
struct Entry {
    row: u32,
    col: Col,
    coeff: Fr,
}

#[derive(Clone, Copy)]
enum Col {
    Input(u32),
    Aux(u32),
}

/// A constraint system that records the sparse A, B, C matrices.
#[derive(Default)]
pub struct QapAssembly {
    pub num_inputs: usize,
    pub num_aux: usize,
    pub num_constraints: usize,
    a: Vec<Entry>,
    b: Vec<Entry>,
    c: Vec<Entry>,
}

/// Each variable's A, B, C polynomials evaluated at τ.
pub struct QapAtTau {
    pub at_inputs: Vec<Fr>,
    pub bt_inputs: Vec<Fr>,
    pub ct_inputs: Vec<Fr>,
    pub at_aux: Vec<Fr>,
    pub bt_aux: Vec<Fr>,
    pub ct_aux: Vec<Fr>,
    /// The domain the QAP lives on.
    pub domain: Domain,
}

impl QapAssembly {
    /// Synthesizes `circuit` as the prover will: constant-one input first,
    /// the `input_i × 0 = 0` constraints last.
    pub fn synthesize<C: Circuit<Fr>>(circuit: C) -> Result<Self, SynthesisError> {
        let mut cs = Self::default();
        cs.alloc_input(|| "one", || Ok(Fr::ONE))?;
        circuit.synthesize(&mut cs)?;
        for i in 0..cs.num_inputs {
            cs.enforce(|| "", |lc| lc + crate::cs::input_var(i), |lc| lc, |lc| lc);
        }
        Ok(cs)
    }

    /// Evaluates the QAP at τ.
    pub fn evaluate_at(&self, tau: Fr) -> Result<QapAtTau, NttError> {
        let domain = Domain::for_len(self.num_constraints)?;
        // L_j(τ) for every row j: the inverse NTT of (1, τ, τ², …).
        let mut lagrange = vec![Fr::ZERO; domain.size()];
        crate::par::for_each_chunk_mut(&mut lagrange, 1 << 14, |off, chunk| {
            let mut p = tau.pow_vartime([off as u64]);
            for x in chunk {
                *x = p;
                p *= tau;
            }
        });
        domain.ifft(&mut lagrange);
        let accumulate = |entries: &[Entry]| {
            let mut inputs = vec![Fr::ZERO; self.num_inputs];
            let mut aux = vec![Fr::ZERO; self.num_aux];
            for e in entries {
                let v = lagrange[e.row as usize] * e.coeff;
                match e.col {
                    Col::Input(i) => inputs[i as usize] += v,
                    Col::Aux(i) => aux[i as usize] += v,
                }
            }
            (inputs, aux)
        };
        let ((at_inputs, at_aux), ((bt_inputs, bt_aux), (ct_inputs, ct_aux))) = std::thread::scope(|s| {
            let a = s.spawn(|| accumulate(&self.a));
            let b = s.spawn(|| accumulate(&self.b));
            let c = accumulate(&self.c);
            (a.join().unwrap(), (b.join().unwrap(), c))
        });
        Ok(QapAtTau { at_inputs, bt_inputs, ct_inputs, at_aux, bt_aux, ct_aux, domain })
    }

    fn record(entries: &mut Vec<Entry>, row: usize, lc: &LinearCombination<Fr>) {
        for (&i, &coeff) in lc.iter_inputs() {
            entries.push(Entry { row: row as u32, col: Col::Input(i as u32), coeff });
        }
        for (&i, &coeff) in lc.iter_aux() {
            entries.push(Entry { row: row as u32, col: Col::Aux(i as u32), coeff });
        }
    }
}

impl ConstraintSystem<Fr> for QapAssembly {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        // Setup needs no values: the closures are not run.
        self.num_aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.num_aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.num_inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.num_inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        let row = self.num_constraints;
        Self::record(&mut self.a, row, &a(LinearCombination::zero()));
        Self::record(&mut self.b, row, &b(LinearCombination::zero()));
        Self::record(&mut self.c, row, &c(LinearCombination::zero()));
        self.num_constraints += 1;
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
}
