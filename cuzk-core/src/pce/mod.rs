//! Pre-compiled constraint systems (PCE): a circuit's R1CS recorded once,
//! so that each proof needs only the witness (allocation closures, no
//! linear combinations) and a sparse matrix-vector product for a, b, c.
//!
//! - [`record`]: one synthesis into a recording constraint system gives a
//!   [`Pce`] (A, B, C as CSR rows over inputs ‖ aux, a deduplicated
//!   coefficient table, the densities the MSMs need);
//! - [`file`]: the versioned, checksummed `.pce` file;
//! - [`spmv`]: a = A·z, b = B·z, c = C·z on all cores;
//! - `gpu` (feature `cuda`): the matrices resident on a GPU, or streamed
//!   to it from host memory, a, b, c computed there;
//! - [`Pce::synthesize`]: witness-only synthesis checked against the
//!   recorded shape, then the SpMV: the same [`ProvingAssignment`] as
//!   classic synthesis, or an error if the circuit allocates differently.

pub mod file;
#[cfg(feature = "cuda")]
pub mod gpu;
mod record;
pub mod spmv;

pub use record::{record, record_with_witness, Part, Recorder};
#[cfg(feature = "filecoin")]
pub(crate) use record::{record_by, record_with_witness_by};

use crate::arith::Density;
use crate::cs::{generate_witness_into, ProvingAssignment, WitnessOnly};
use bellpepper_core::{Circuit, SynthesisError};
use blstrs::Scalar as Fr;

/// Coefficient index of 1 in every coefficient table.
pub const COEFF_ONE: u32 = 0;
/// Coefficient index of −1 in every coefficient table.
pub const COEFF_MINUS_ONE: u32 = 1;

/// One matrix (A, B or C) in compressed sparse rows: row r's entries are
/// `cols[row_ptr[r]..row_ptr[r + 1]]` with coefficients
/// `coeffs[coeff_idx[k]]`. A column below the input count is that input,
/// else aux `col - num_inputs`. Zero coefficients are never stored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SparseMatrix {
    pub row_ptr: Vec<u32>,
    pub cols: Vec<u32>,
    pub coeff_idx: Vec<u32>,
}

impl SparseMatrix {
    pub fn num_rows(&self) -> usize {
        self.row_ptr.len().saturating_sub(1)
    }

    pub fn nnz(&self) -> usize {
        self.cols.len()
    }

    /// Host bytes of the matrix.
    pub fn bytes(&self) -> u64 {
        4 * (self.row_ptr.len() + self.cols.len() + self.coeff_idx.len()) as u64
    }
}

/// What a witness must look like to fit a PCE: its variable counts and a
/// hash of where the inputs fall among the aux allocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Public inputs, the constant one included.
    pub num_inputs: usize,
    pub num_aux: usize,
    /// [`input_order_hash`] of the inputs' positions.
    pub input_order: u64,
}

impl Shape {
    /// Elements of z: inputs ‖ aux.
    pub fn num_vars(&self) -> usize {
        self.num_inputs + self.num_aux
    }

    /// The shape of a witness produced by [`WitnessOnly`].
    pub fn of_witness(w: &WitnessOnly) -> Self {
        Shape { num_inputs: w.input_assignment.len(), num_aux: w.aux_assignment.len(), input_order: input_order_hash(&w.input_positions) }
    }
}

/// A PCE's sizes, as its file's header states them: enough to size its
/// matrices' device copy and its witness before the matrices are read
/// (a backend deciding, as an SRS loads, what will fit beside it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PceSizes {
    pub num_constraints: usize,
    /// Entries of A, B and C.
    pub nnz: [usize; 3],
    /// Entries of the coefficient table.
    pub num_coeffs: usize,
    /// Elements of z: inputs ‖ aux.
    pub num_vars: usize,
}

impl PceSizes {
    /// [`Pce::z_bytes`] of a PCE of these sizes.
    pub fn z_bytes(&self) -> u64 {
        32 * self.num_vars as u64
    }
}

/// A hash of, for each input in allocation order, the number of aux
/// variables allocated before it: two syntheses with equal counts but a
/// different interleaving of inputs and aux differ here.
pub fn input_order_hash(positions: &[usize]) -> u64 {
    let mut h = blake2b_simd::Params::new().hash_length(8).to_state();
    for &p in positions {
        h.update(&(p as u64).to_le_bytes());
    }
    u64::from_le_bytes(h.finalize().as_bytes().try_into().expect("8-byte hash"))
}

/// The variables `cols` touch, as two bitmaps: the inputs (columns below
/// `num_inputs`) and the aux (the `num_aux` after them). On all cores:
/// each marks its chunk's columns in bitmaps of its own, then the bitmaps
/// are merged word range by word range.
fn densities(cols: &[u32], num_inputs: usize, num_aux: usize) -> (Density, Density) {
    let (wi, wa) = (num_inputs.div_ceil(64), num_aux.div_ceil(64));
    let parts = crate::par::map_chunks(cols, 1 << 20, |_, chunk| {
        let mut words = vec![0u64; wi + wa];
        for &col in chunk {
            let col = col as usize;
            let i = if col < num_inputs { col } else { wi * 64 + col - num_inputs };
            words[i / 64] |= 1 << (i % 64);
        }
        words
    });
    let mut words = vec![0u64; wi + wa];
    crate::par::for_each_chunk_mut(&mut words, 1 << 12, |start, out| {
        for part in &parts {
            out.iter_mut().zip(&part[start..]).for_each(|(o, p)| *o |= p);
        }
    });
    let aux = words.split_off(wi);
    (Density::from_words(words, num_inputs), Density::from_words(aux, num_aux))
}

/// A circuit's recorded R1CS.
#[derive(Clone, Debug, PartialEq)]
pub struct Pce {
    /// The matrices' page-locking where they stream to a GPU
    /// (`gpu::pin_matrices`). First, so that it is undone before the
    /// matrices are freed.
    pub(crate) pinned: Pinned,
    /// The circuit id it was recorded for (names the file).
    pub circuit_id: String,
    pub shape: Shape,
    /// Distinct non-zero coefficients: [1, −1, others in first-use order].
    pub coeffs: Vec<Fr>,
    pub a: SparseMatrix,
    pub b: SparseMatrix,
    pub c: SparseMatrix,
    /// Derived from the matrices, exactly as [`ProvingAssignment`] marks them.
    pub a_aux_density: Density,
    pub b_input_density: Density,
    pub b_aux_density: Density,
}

/// Whatever keeps a PCE's matrices page-locked (set once, released when
/// the PCE is dropped). A clone is not pinned; it compares equal either way.
#[derive(Default)]
pub(crate) struct Pinned(std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>);

impl Pinned {
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn set(&self, hold: Box<dyn std::any::Any + Send + Sync>) -> bool {
        self.0.set(hold).is_ok()
    }

    pub(crate) fn is_set(&self) -> bool {
        self.0.get().is_some()
    }
}

impl Clone for Pinned {
    fn clone(&self) -> Self {
        Pinned::default()
    }
}

impl PartialEq for Pinned {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for Pinned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", if self.is_set() { "pinned" } else { "pageable" })
    }
}

/// Why a PCE could not be built, read or used.
#[derive(Debug, thiserror::Error)]
pub enum PceError {
    // Not a `source` field: the message already carries it, and a source
    // would print it twice in an error chain.
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("not a PCE file (bad magic bytes)")]
    NotPce,
    #[error("PCE file version {found}, this build reads version {supported} (stale file: rebuild it)")]
    Version { found: u32, supported: u32 },
    #[error("PCE file truncated or altered: its header describes {expected} bytes, the file has {actual}")]
    Size { expected: u64, actual: u64 },
    #[error("PCE file checksum mismatch (altered or corrupt)")]
    Checksum,
    #[error("PCE file malformed: {0}")]
    Malformed(String),
    #[error("PCE is for circuit {found:?}, expected {expected:?}")]
    CircuitId { expected: String, found: String },
    #[error("circuit {circuit_id:?} does not match its PCE: {what} is {circuit} in the circuit, {pce} in the PCE (stale PCE or a circuit that allocates differently)")]
    ShapeMismatch { circuit_id: String, what: &'static str, circuit: String, pce: String },
    #[error("circuit {circuit_id:?}'s witness does not satisfy constraint {constraint} of its PCE (a PCE recorded from another revision of the circuit with the same shape, or a request that does not satisfy the circuit)")]
    Unsatisfied { circuit_id: String, constraint: usize },
    #[error("circuit too large for a PCE: {0}")]
    TooLarge(String),
    #[error("synthesis failed: {0}")]
    Synthesis(#[from] SynthesisError),
}

impl Pce {
    pub fn num_constraints(&self) -> usize {
        self.a.num_rows()
    }

    /// Builds a PCE from its matrices, deriving the densities. The parts
    /// must be consistent (see [`Pce::validate`]).
    pub fn from_parts(
        circuit_id: String,
        shape: Shape,
        coeffs: Vec<Fr>,
        a: SparseMatrix,
        b: SparseMatrix,
        c: SparseMatrix,
    ) -> Result<Self, PceError> {
        let mut pce = Pce {
            pinned: Pinned::default(),
            circuit_id,
            shape,
            coeffs,
            a,
            b,
            c,
            a_aux_density: Density::new(),
            b_input_density: Density::new(),
            b_aux_density: Density::new(),
        };
        pce.validate()?;
        let (ni, na) = (shape.num_inputs, shape.num_aux);
        // Inputs are fully dense in A through the input constraints, so
        // (like ProvingAssignment) only A's aux density is tracked.
        (_, pce.a_aux_density) = densities(&pce.a.cols, ni, na);
        (pce.b_input_density, pce.b_aux_density) = densities(&pce.b.cols, ni, na);
        Ok(pce)
    }

    /// Checks every index against its bounds, so that evaluating a PCE
    /// read from disk can never index out of range. On all cores: a
    /// production PCE has ~700M entries.
    pub fn validate(&self) -> Result<(), PceError> {
        use crate::par::first_index;
        /// Entries per thread at least.
        const MIN_CHECKED: usize = 1 << 16;
        let bad = |m: String| Err(PceError::Malformed(m));
        if self.coeffs.len() < 2 || self.coeffs[0] != Fr::from(1u64) || self.coeffs[1] != -Fr::from(1u64) {
            return bad("the coefficient table does not start with 1, -1".into());
        }
        let vars = self.shape.num_vars() as u64;
        let rows = self.a.num_rows();
        for (name, m) in [("A", &self.a), ("B", &self.b), ("C", &self.c)] {
            if m.num_rows() != rows || m.row_ptr.is_empty() {
                return bad(format!("{name} has {} rows, A has {rows}", m.num_rows()));
            }
            if m.cols.len() != m.coeff_idx.len() {
                return bad(format!("{name} has {} columns but {} coefficients", m.cols.len(), m.coeff_idx.len()));
            }
            if m.row_ptr[0] != 0 || *m.row_ptr.last().unwrap() as usize != m.cols.len() {
                return bad(format!("{name}'s row pointers do not span its {} entries", m.cols.len()));
            }
            if let Some(r) = first_index(m.row_ptr.len() - 1, MIN_CHECKED, |r| m.row_ptr[r] > m.row_ptr[r + 1]) {
                return bad(format!("{name}'s row pointers decrease at row {r}"));
            }
            if let Some(k) = first_index(m.cols.len(), MIN_CHECKED, |k| m.cols[k] as u64 >= vars) {
                return bad(format!("{name} entry {k}: column {} beyond the {vars} variables", m.cols[k]));
            }
            let ncoeffs = self.coeffs.len();
            if let Some(k) = first_index(m.coeff_idx.len(), MIN_CHECKED, |k| m.coeff_idx[k] as usize >= ncoeffs) {
                return bad(format!("{name} entry {k}: coefficient {} beyond the table of {ncoeffs}", m.coeff_idx[k]));
            }
        }
        Ok(())
    }

    /// Host bytes the PCE holds (for the memory budget).
    pub fn bytes(&self) -> u64 {
        let bitmaps = (self.a_aux_density.len() + self.b_input_density.len() + self.b_aux_density.len()) as u64 / 8;
        self.a.bytes() + self.b.bytes() + self.c.bytes() + 32 * self.coeffs.len() as u64 + bitmaps
    }

    /// Host bytes of one witness-only assignment of this circuit (its
    /// witness and densities; [`Pce::witness_assignment`]).
    pub fn witness_bytes(&self) -> u64 {
        let bitmaps = (self.a_aux_density.len() + self.b_input_density.len() + self.b_aux_density.len()) as u64 / 8;
        self.z_bytes() + bitmaps
    }

    /// Host bytes of one assignment of this circuit with its a, b, c from
    /// the CPU SpMV (one Fr per constraint each) beside its witness.
    pub fn assignment_bytes(&self) -> u64 {
        self.witness_bytes() + 3 * 32 * self.num_constraints() as u64
    }

    /// Bytes of one witness z = inputs ‖ aux of this circuit (on the host,
    /// or on a device for the SpMV).
    pub fn z_bytes(&self) -> u64 {
        self.sizes().z_bytes()
    }

    /// Its sizes (what its file's header states).
    pub fn sizes(&self) -> PceSizes {
        PceSizes {
            num_constraints: self.num_constraints(),
            nnz: [self.a.nnz(), self.b.nnz(), self.c.nnz()],
            num_coeffs: self.coeffs.len(),
            num_vars: self.shape.num_vars(),
        }
    }

    /// Checks a witness's shape against the recorded one.
    pub fn check_shape(&self, shape: &Shape) -> Result<(), PceError> {
        let mismatch =
            |what, circuit: String, pce: String| Err(PceError::ShapeMismatch { circuit_id: self.circuit_id.clone(), what, circuit, pce });
        let rec = &self.shape;
        if shape.num_inputs != rec.num_inputs {
            return mismatch("the number of inputs", shape.num_inputs.to_string(), rec.num_inputs.to_string());
        }
        if shape.num_aux != rec.num_aux {
            return mismatch("the number of aux variables", shape.num_aux.to_string(), rec.num_aux.to_string());
        }
        if shape.input_order != rec.input_order {
            return mismatch(
                "the order of input allocations (hash)",
                format!("{:016x}", shape.input_order),
                format!("{:016x}", rec.input_order),
            );
        }
        Ok(())
    }

    /// a, b, c and the densities for a witness of this circuit, after
    /// checking its shape: the [`ProvingAssignment`] classic synthesis
    /// would give.
    pub fn assignment(&self, witness: WitnessOnly) -> Result<ProvingAssignment, PceError> {
        let mut pa = self.witness_assignment(witness)?;
        (pa.a, pa.b, pa.c) = self.abc(&pa);
        Ok(pa)
    }

    /// The densities and the witness, after checking its shape, with a, b,
    /// c left to compute ([`ProvingAssignment::abc_deferred`]): for a
    /// prover that computes them itself (the GPU prover with this PCE's
    /// matrices resident on its device), so that the host never holds them.
    pub fn witness_assignment(&self, witness: WitnessOnly) -> Result<ProvingAssignment, PceError> {
        self.check_shape(&Shape::of_witness(&witness))?;
        Ok(ProvingAssignment {
            a_aux_density: self.a_aux_density.clone(),
            b_input_density: self.b_input_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
            constraints: self.num_constraints(),
            a: Vec::new(),
            b: Vec::new(),
            c: Vec::new(),
            input_assignment: witness.input_assignment,
            aux_assignment: witness.aux_assignment,
        })
    }

    /// a, b, c of an assignment of this circuit's shape (the CPU SpMV).
    pub fn abc(&self, pa: &ProvingAssignment) -> (Vec<Fr>, Vec<Fr>, Vec<Fr>) {
        spmv::evaluate(self, &pa.input_assignment, &pa.aux_assignment)
    }

    /// Checks that an assignment's a, b, c (from [`Pce::assignment`])
    /// satisfy every constraint: a_i · b_i = c_i. A witness of its circuit
    /// does. A PCE read from a file is confirmed this way against the first
    /// witness it serves: one recorded from another revision of the circuit
    /// with the same shape passes every other check, and its proofs would
    /// not verify. The first failing constraint is named. A witness-only
    /// assignment (from [`Pce::witness_assignment`]) is checked row by row
    /// from its witness, its a, b, c never held
    /// ([`spmv::first_unsatisfied`]).
    pub fn check_satisfied(&self, pa: &ProvingAssignment) -> Result<(), PceError> {
        /// Constraints per thread at least.
        const MIN_CHECKED: usize = 1 << 14;
        let n = self.num_constraints();
        let first = if pa.abc_deferred() && pa.constraints == n {
            spmv::first_unsatisfied(self, &pa.input_assignment, &pa.aux_assignment)
        } else {
            assert!(pa.a.len() == n && pa.b.len() == n && pa.c.len() == n, "a, b, c computed from this PCE");
            crate::par::first_index(n, MIN_CHECKED, |i| pa.a[i] * pa.b[i] != pa.c[i])
        };
        match first {
            Some(constraint) => Err(PceError::Unsatisfied { circuit_id: self.circuit_id.clone(), constraint }),
            None => Ok(()),
        }
    }

    /// An empty witness with room for this circuit's variables, to
    /// generate one into ([`crate::cs::generate_witness_into`]).
    pub fn empty_witness(&self) -> WitnessOnly {
        WitnessOnly::with_capacity(self.shape.num_inputs, self.shape.num_aux)
    }

    /// Witness-only synthesis of `circuit`, then [`Pce::assignment`].
    pub fn synthesize<C: Circuit<Fr>>(&self, circuit: C) -> Result<ProvingAssignment, PceError> {
        self.assignment(generate_witness_into(circuit, self.empty_witness())?)
    }
}

#[cfg(test)]
mod tests;
