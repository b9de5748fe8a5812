//! cuzk-core's witness generators for bellperson's gadgets against the
//! gadgets themselves: into `WitnessOnly` the same auxiliary assignment
//! value for value, the same inputs and the same results (values, and the
//! variables of the bits handed back); with any other constraint system
//! the gadget itself (a satisfied test system, the same constraints).

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::test_cs::TestConstraintSystem;
use bellpepper_core::{ConstraintSystem, Index, SynthesisError};
use bellperson::gadgets::uint32::UInt32;
use blstrs::Scalar as Fr;
use cuzk_core::cs::WitnessOnly;
use cuzk_core::witness_gadgets;
use ff::Field;
use filecoin_hashers::sha256::Sha256Function;
use filecoin_hashers::HashFunction;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};
use storage_proofs_core::gadgets::uint64::UInt64;
use storage_proofs_porep::stacked::{create_label_circuit, TOTAL_PARENTS};

/// One label's message: replica id, layer and node, 37 parents, 32 bytes each.
const LABEL_BITS: usize = (2 + TOTAL_PARENTS) * 256;
const LENGTHS: [usize; 8] = [0, 8, 440, 448, 504, 512, 1024, LABEL_BITS];

#[derive(Clone, Copy, Debug)]
enum Kinds {
    /// Every bit a variable (`Boolean::Is`).
    Allocated,
    /// Every bit a variable used negated (`Boolean::Not`).
    Negated,
    /// Constants, `Is` and `Not` at random, with runs of each.
    Mixed,
}

/// How to make each input bit: its value and kind (0 constant, 1 Is, 2 Not).
fn plan(rng: &mut ChaCha8Rng, len: usize, kinds: Kinds) -> Vec<(bool, u8)> {
    let mut kind = 1;
    (0..len)
        .map(|_| {
            let k = match kinds {
                Kinds::Allocated => 1,
                Kinds::Negated => 2,
                Kinds::Mixed => {
                    // Runs, so whole words of one kind occur as well as mixtures.
                    if rng.gen_ratio(1, 12) {
                        kind = rng.gen_range(0..3);
                    }
                    if rng.gen_ratio(1, 6) {
                        rng.gen_range(0..3)
                    } else {
                        kind
                    }
                }
            };
            (rng.gen(), k)
        })
        .collect()
}

fn make_bits<CS: ConstraintSystem<Fr>>(cs: &mut CS, plan: &[(bool, u8)]) -> Vec<Boolean> {
    plan.iter()
        .enumerate()
        .map(|(i, &(v, k))| match k {
            0 => Boolean::Constant(v),
            1 => Boolean::Is(AllocatedBit::alloc(cs.namespace(|| format!("in {i}")), Some(v)).unwrap()),
            _ => Boolean::Not(AllocatedBit::alloc(cs.namespace(|| format!("in {i}")), Some(!v)).unwrap()),
        })
        .collect()
}

/// A witness-only system with the constant one allocated, as the engine makes it.
fn witness_cs() -> WitnessOnly {
    let mut cs = WitnessOnly::new();
    cs.alloc_input(|| "one", || Ok(Fr::from(1))).unwrap();
    cs
}

/// A Boolean as something comparable: kind, variable, value.
fn describe(b: &Boolean) -> (u8, Option<Index>, Option<bool>) {
    match b {
        Boolean::Constant(v) => (0, None, Some(*v)),
        Boolean::Is(a) => (1, Some(a.get_variable().get_unchecked()), b.get_value()),
        Boolean::Not(a) => (2, Some(a.get_variable().get_unchecked()), b.get_value()),
    }
}

/// The message's SHA-256 by `sha2`, as bits most significant first.
fn sha2_bits(plan: &[(bool, u8)]) -> Vec<bool> {
    let bytes: Vec<u8> = plan.chunks(8).map(|c| c.iter().fold(0u8, |acc, &(v, _)| (acc << 1) | v as u8)).collect();
    Sha256::digest(bytes).iter().flat_map(|&x| (0..8).rev().map(move |i| (x >> i) & 1 == 1)).collect()
}

fn values(bits: &[Boolean]) -> Vec<bool> {
    bits.iter().map(|b| b.get_value().unwrap()).collect()
}

fn sha256_both(plan: &[(bool, u8)]) -> (WitnessOnly, Vec<Boolean>, WitnessOnly, Vec<Boolean>) {
    let mut gadget_cs = witness_cs();
    let input = make_bits(&mut gadget_cs, plan);
    let gadget_out = bellperson::gadgets::sha256::sha256(gadget_cs.namespace(|| "sha256"), &input).unwrap();
    let mut ours_cs = witness_cs();
    let input = make_bits(&mut ours_cs, plan);
    let ours_out = witness_gadgets::sha256(ours_cs.namespace(|| "sha256"), &input).unwrap();
    (gadget_cs, gadget_out, ours_cs, ours_out)
}

#[test]
fn sha256_witness_matches_the_gadget() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5a256);
    for kinds in [Kinds::Allocated, Kinds::Negated, Kinds::Mixed] {
        for len in LENGTHS {
            let plan = plan(&mut rng, len, kinds);
            let (gadget_cs, gadget_out, ours_cs, ours_out) = sha256_both(&plan);
            let what = format!("{len} bits, {kinds:?}");
            assert_eq!(ours_cs.aux_assignment.len(), gadget_cs.aux_assignment.len(), "{what}: aux count");
            assert!(ours_cs == gadget_cs, "{what}: witness differs");
            let ours: Vec<_> = ours_out.iter().map(describe).collect();
            let gadget: Vec<_> = gadget_out.iter().map(describe).collect();
            assert_eq!(ours, gadget, "{what}: digest bits");
            assert_eq!(values(&ours_out), sha2_bits(&plan), "{what}: digest against sha2");
        }
    }
}

/// A message of constants only allocates nothing, and hands back constants.
#[test]
fn sha256_of_constants_allocates_nothing() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for len in [0, 8, 512, 1024] {
        let plan: Vec<(bool, u8)> = (0..len).map(|_| (rng.gen(), 0)).collect();
        let (gadget_cs, gadget_out, ours_cs, ours_out) = sha256_both(&plan);
        assert_eq!(gadget_cs.aux_assignment.len(), 0);
        assert!(ours_cs == gadget_cs);
        assert!(ours_out.iter().all(Boolean::is_constant));
        let ours: Vec<_> = ours_out.iter().map(describe).collect();
        let gadget: Vec<_> = gadget_out.iter().map(describe).collect();
        assert_eq!(ours, gadget, "{len} bits");
    }
}

/// Not a witness generator: the gadget itself, every constraint there.
#[test]
fn sha256_into_a_test_system_is_the_gadget() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for len in [8, 512, 1024] {
        let plan = plan(&mut rng, len, Kinds::Mixed);
        let mut ours = TestConstraintSystem::<Fr>::new();
        let input = make_bits(&mut ours, &plan);
        let out = witness_gadgets::sha256(ours.namespace(|| "sha256"), &input).unwrap();
        assert!(ours.is_satisfied(), "{len} bits: {:?}", ours.which_is_unsatisfied());
        let mut gadget = TestConstraintSystem::<Fr>::new();
        let input = make_bits(&mut gadget, &plan);
        bellperson::gadgets::sha256::sha256(gadget.namespace(|| "sha256"), &input).unwrap();
        assert_eq!(ours.num_constraints(), gadget.num_constraints());
        assert_eq!(ours.num_inputs(), gadget.num_inputs());
        assert_eq!(values(&out), sha2_bits(&plan), "{len} bits");
    }
}

fn random_fr(rng: &mut ChaCha8Rng, i: usize) -> Fr {
    match i {
        0 => Fr::ZERO,
        1 => Fr::ONE,
        2 => -Fr::ONE,
        _ => Fr::random(&mut *rng),
    }
}

#[test]
fn to_bits_le_matches_the_gadget() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for i in 0..12 {
        let v = random_fr(&mut rng, i);
        let mut gadget_cs = witness_cs();
        let num = AllocatedNum::alloc(gadget_cs.namespace(|| "num"), || Ok(v)).unwrap();
        let gadget = num.to_bits_le(gadget_cs.namespace(|| "bits")).unwrap();
        let mut ours_cs = witness_cs();
        let num = AllocatedNum::alloc(ours_cs.namespace(|| "num"), || Ok(v)).unwrap();
        let ours = witness_gadgets::to_bits_le(ours_cs.namespace(|| "bits"), &num).unwrap();
        assert!(ours_cs == gadget_cs, "value {i}");
        assert_eq!(ours.iter().map(describe).collect::<Vec<_>>(), gadget.iter().map(describe).collect::<Vec<_>>());

        let mut test_cs = TestConstraintSystem::<Fr>::new();
        let num = AllocatedNum::alloc(test_cs.namespace(|| "num"), || Ok(v)).unwrap();
        witness_gadgets::to_bits_le(test_cs.namespace(|| "bits"), &num).unwrap();
        assert!(test_cs.is_satisfied());
        assert_eq!(test_cs.num_constraints(), 256);
    }
}

/// filecoin-hashers' SHA-256 `hash_circuit` and `hash2_circuit` (a Merkle
/// node of comm_d's tree) against ours, into `WitnessOnly` and a test system.
#[test]
fn sha256_hasher_circuits_match_filecoin_hashers() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    for (len, kinds) in [(512, Kinds::Allocated), (LABEL_BITS, Kinds::Mixed), (8, Kinds::Negated)] {
        let plan = plan(&mut rng, len, kinds);
        let mut gadget_cs = witness_cs();
        let bits = make_bits(&mut gadget_cs, &plan);
        let gadget = Sha256Function::hash_circuit(gadget_cs.namespace(|| "h"), &bits).unwrap();
        let mut ours_cs = witness_cs();
        let bits = make_bits(&mut ours_cs, &plan);
        let ours = witness_gadgets::sha256_packed(ours_cs.namespace(|| "h"), &bits).unwrap();
        assert!(ours_cs == gadget_cs, "{len} bits {kinds:?}");
        assert_eq!((ours.get_value(), ours.get_variable()), (gadget.get_value(), gadget.get_variable()));
    }
    for i in 0..4 {
        let (a, b) = (random_fr(&mut rng, i), random_fr(&mut rng, i + 1));
        let nums = |cs: &mut WitnessOnly| {
            let a = AllocatedNum::alloc(cs.namespace(|| "a"), || Ok(a)).unwrap();
            let b = AllocatedNum::alloc(cs.namespace(|| "b"), || Ok(b)).unwrap();
            [a, b]
        };
        let mut gadget_cs = witness_cs();
        let [x, y] = nums(&mut gadget_cs);
        let gadget = Sha256Function::hash2_circuit(gadget_cs.namespace(|| "node"), &x, &y).unwrap();
        let mut ours_cs = witness_cs();
        let leaves = nums(&mut ours_cs);
        let ours = witness_gadgets::sha256_multi_leaf(ours_cs.namespace(|| "node"), &leaves).unwrap();
        assert!(ours_cs == gadget_cs, "hash2 {i}");
        assert_eq!((ours.get_value(), ours.get_variable()), (gadget.get_value(), gadget.get_variable()));

        let mut ours = TestConstraintSystem::<Fr>::new();
        let a = AllocatedNum::alloc(ours.namespace(|| "a"), || Ok(a)).unwrap();
        let b = AllocatedNum::alloc(ours.namespace(|| "b"), || Ok(b)).unwrap();
        let node = witness_gadgets::sha256_multi_leaf(ours.namespace(|| "node"), &[a.clone(), b.clone()]).unwrap();
        assert!(ours.is_satisfied());
        let mut gadget = TestConstraintSystem::<Fr>::new();
        let a = AllocatedNum::alloc(gadget.namespace(|| "a"), || Ok(a.get_value().unwrap())).unwrap();
        let b = AllocatedNum::alloc(gadget.namespace(|| "b"), || Ok(b.get_value().unwrap())).unwrap();
        let expected = Sha256Function::hash2_circuit(gadget.namespace(|| "node"), &a, &b).unwrap();
        assert_eq!(ours.num_constraints(), gadget.num_constraints());
        assert_eq!(node.get_value(), expected.get_value());
    }
}

/// neptune's legacy Poseidon circuit (filecoin-hashers' Poseidon) at the
/// arities Filecoin's circuits use, against ours.
#[test]
fn poseidon_witness_matches_neptune() {
    fn check<A: neptune::Arity<Fr>>(rng: &mut ChaCha8Rng) {
        let constants = neptune::poseidon::PoseidonConstants::<Fr, A>::new();
        let arity = <A as typenum::Unsigned>::to_usize();
        let values: Vec<Fr> = (0..arity).map(|i| random_fr(rng, i)).collect();
        let nums = |cs: &mut WitnessOnly| -> Vec<AllocatedNum<Fr>> {
            values.iter().enumerate().map(|(i, v)| AllocatedNum::alloc(cs.namespace(|| format!("x{i}")), || Ok(*v)).unwrap()).collect()
        };
        let mut gadget_cs = witness_cs();
        let preimage = nums(&mut gadget_cs);
        let gadget = neptune::circuit::poseidon_hash(gadget_cs.namespace(|| "h"), preimage, &constants).unwrap();
        let mut ours_cs = witness_cs();
        let preimage = nums(&mut ours_cs);
        let ours = witness_gadgets::poseidon_hash(ours_cs.namespace(|| "h"), preimage, &constants).unwrap();
        assert_eq!(ours_cs.aux_assignment.len(), gadget_cs.aux_assignment.len(), "arity {arity}: aux count");
        assert!(ours_cs == gadget_cs, "arity {arity}: witness differs");
        assert_eq!((ours.get_value(), ours.get_variable()), (gadget.get_value(), gadget.get_variable()));
        assert_eq!(ours.get_value(), Some(neptune::Poseidon::new_with_preimage(&values, &constants).hash()));

        let mut test_cs = TestConstraintSystem::<Fr>::new();
        let preimage: Vec<_> = values
            .iter()
            .enumerate()
            .map(|(i, v)| AllocatedNum::alloc(test_cs.namespace(|| format!("x{i}")), || Ok(*v)).unwrap())
            .collect();
        let out = witness_gadgets::poseidon_hash(test_cs.namespace(|| "h"), preimage, &constants).unwrap();
        assert!(test_cs.is_satisfied(), "arity {arity}");
        assert_eq!(out.get_value(), ours.get_value());
    }
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    for _ in 0..3 {
        check::<typenum::U2>(&mut rng);
        check::<typenum::U8>(&mut rng);
        check::<typenum::U11>(&mut rng);
    }
}

/// filecoin-hashers' Poseidon circuits (its own constants) against ours:
/// `hash2_circuit` (comm_r), `hash_multi_leaf_circuit` at 8 (tree_c,
/// tree_r_last) and 11 (a column).
#[test]
fn poseidon_hasher_circuits_match_filecoin_hashers() {
    use filecoin_hashers::poseidon::PoseidonFunction;
    use filecoin_hashers::PoseidonArity;
    fn check<A: PoseidonArity + 'static>(rng: &mut ChaCha8Rng) {
        let arity = <A as typenum::Unsigned>::to_usize();
        let values: Vec<Fr> = (0..arity).map(|_| Fr::random(&mut *rng)).collect();
        let nums = |cs: &mut WitnessOnly| -> Vec<AllocatedNum<Fr>> {
            values.iter().enumerate().map(|(i, v)| AllocatedNum::alloc(cs.namespace(|| format!("x{i}")), || Ok(*v)).unwrap()).collect()
        };
        let mut gadget_cs = witness_cs();
        let leaves = nums(&mut gadget_cs);
        let gadget = if arity == 2 {
            PoseidonFunction::hash2_circuit(gadget_cs.namespace(|| "h"), &leaves[0], &leaves[1]).unwrap()
        } else {
            PoseidonFunction::hash_multi_leaf_circuit::<A, _>(gadget_cs.namespace(|| "h"), &leaves, 0).unwrap()
        };
        let mut ours_cs = witness_cs();
        let leaves = nums(&mut ours_cs);
        let ours = witness_gadgets::poseidon_hash(ours_cs.namespace(|| "h"), leaves, A::PARAMETERS()).unwrap();
        assert!(ours_cs == gadget_cs, "arity {arity}: witness differs");
        assert_eq!((ours.get_value(), ours.get_variable()), (gadget.get_value(), gadget.get_variable()));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(19);
    check::<typenum::U2>(&mut rng);
    check::<typenum::U8>(&mut rng);
    check::<typenum::U11>(&mut rng);
}

/// The inputs of one label: replica id, parents, layer, node.
struct LabelPlan {
    replica_id: Vec<(bool, u8)>,
    parents: Vec<Vec<(bool, u8)>>,
    layer: u32,
    layer_allocated: bool,
    node: u64,
}

impl LabelPlan {
    fn random(rng: &mut ChaCha8Rng, kinds: Kinds, layer_allocated: bool) -> LabelPlan {
        LabelPlan {
            replica_id: plan(rng, 256, kinds),
            parents: (0..TOTAL_PARENTS).map(|_| plan(rng, 256, kinds)).collect(),
            layer: rng.gen_range(1..12),
            layer_allocated,
            node: rng.gen_range(0..1u64 << 30),
        }
    }

    #[allow(clippy::type_complexity)]
    fn make<CS: ConstraintSystem<Fr>>(&self, cs: &mut CS) -> (Vec<Boolean>, Vec<Vec<Boolean>>, UInt32, UInt64) {
        let replica_id = make_bits(&mut cs.namespace(|| "replica id"), &self.replica_id);
        let parents = self.parents.iter().enumerate().map(|(j, p)| make_bits(&mut cs.namespace(|| format!("parent {j}")), p)).collect();
        let layer = if self.layer_allocated {
            UInt32::alloc(cs.namespace(|| "layer"), Some(self.layer)).unwrap()
        } else {
            UInt32::constant(self.layer)
        };
        let node = UInt64::alloc(cs.namespace(|| "node"), Some(self.node)).unwrap();
        (replica_id, parents, layer, node)
    }
}

#[test]
fn create_label_witness_matches_the_gadget() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x1abe1);
    for (kinds, layer_allocated) in [(Kinds::Allocated, false), (Kinds::Mixed, true), (Kinds::Negated, false)] {
        let plan = LabelPlan::random(&mut rng, kinds, layer_allocated);
        let mut gadget_cs = witness_cs();
        let (r, p, l, n) = plan.make(&mut gadget_cs);
        let gadget = create_label_circuit(gadget_cs.namespace(|| "label"), &r, p, l, n).unwrap();
        let mut ours_cs = witness_cs();
        let (r, p, l, n) = plan.make(&mut ours_cs);
        let ours = witness_gadgets::create_label(ours_cs.namespace(|| "label"), &r, p, l, n).unwrap();
        let what = format!("{kinds:?}, layer allocated {layer_allocated}");
        assert_eq!(ours_cs.aux_assignment.len(), gadget_cs.aux_assignment.len(), "{what}: aux count");
        assert!(ours_cs == gadget_cs, "{what}: witness differs");
        assert_eq!(ours.get_value(), gadget.get_value(), "{what}");
        assert_eq!(ours.get_variable(), gadget.get_variable(), "{what}");
    }
}

#[test]
fn create_label_into_a_test_system_is_the_gadget() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let plan = LabelPlan::random(&mut rng, Kinds::Mixed, true);
    let mut ours = TestConstraintSystem::<Fr>::new();
    let (r, p, l, n) = plan.make(&mut ours);
    let label = witness_gadgets::create_label(ours.namespace(|| "label"), &r, p, l, n).unwrap();
    assert!(ours.is_satisfied(), "{:?}", ours.which_is_unsatisfied());
    let mut gadget = TestConstraintSystem::<Fr>::new();
    let (r, p, l, n) = plan.make(&mut gadget);
    let expected = create_label_circuit(gadget.namespace(|| "label"), &r, p, l, n).unwrap();
    assert_eq!(ours.num_constraints(), gadget.num_constraints());
    assert_eq!(label.get_value(), expected.get_value());
}

/// Best of 20 of the mean of 10 calls of `f` into `cs`, its witness vector
/// truncated back between runs (grown already, as deep inside a partition).
fn per_call(cs: &mut WitnessOnly, f: &dyn Fn(&mut WitnessOnly) -> AllocatedNum<Fr>) -> f64 {
    let inputs_end = cs.aux_assignment.len();
    let mut best = f64::MAX;
    for _ in 0..20 {
        cs.aux_assignment.truncate(inputs_end);
        let t = std::time::Instant::now();
        for _ in 0..10 {
            std::hint::black_box(f(cs));
        }
        best = best.min(t.elapsed().as_secs_f64() / 10.0);
    }
    best
}

/// One label's SHA-256 (9984 bits) into `WitnessOnly`, ours against the
/// gadget: `cargo test --release --workspace --test witness_gadgets -- --ignored --nocapture`.
#[test]
#[ignore]
fn label_sha256_witness_speed() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let plan = plan(&mut rng, LABEL_BITS, Kinds::Allocated);
    // One system, reused: its witness vector already grown, as deep inside
    // a partition's synthesis, so only the generator's own work is timed.
    let mut cs = witness_cs();
    let input = make_bits(&mut cs, &plan);
    let inputs_end = cs.aux_assignment.len();
    let mut time = |f: &dyn Fn(&mut WitnessOnly, &[Boolean]) -> Result<Vec<Boolean>, SynthesisError>| {
        let mut best = f64::MAX;
        for _ in 0..20 {
            cs.aux_assignment.truncate(inputs_end);
            let t = std::time::Instant::now();
            std::hint::black_box(f(&mut cs, &input).unwrap());
            best = best.min(t.elapsed().as_secs_f64());
        }
        best
    };
    let gadget = time(&|cs, input| bellperson::gadgets::sha256::sha256(cs.namespace(|| "sha256"), input));
    let ours = time(&|cs, input| witness_gadgets::sha256(cs.namespace(|| "sha256"), input));
    println!(
        "9984-bit SHA-256 witness (one label), best of 20, one core: gadget {:.3} ms, ours {:.3} ms, {:.1}x",
        gadget * 1e3,
        ours * 1e3,
        gadget / ours
    );

    // A comm_d Merkle node: two field elements' bits, a 512-bit SHA-256, packed.
    let leaves: Vec<AllocatedNum<Fr>> =
        (0..2).map(|i| AllocatedNum::alloc(cs.namespace(|| format!("leaf {i}")), || Ok(Fr::random(&mut rng))).unwrap()).collect();
    let gadget = per_call(&mut cs, &|cs| Sha256Function::hash2_circuit(cs.namespace(|| "node"), &leaves[0], &leaves[1]).unwrap());
    let ours = per_call(&mut cs, &|cs| witness_gadgets::sha256_multi_leaf(cs.namespace(|| "node"), &leaves).unwrap());
    println!(
        "SHA-256 Merkle node (hash2_circuit), best of 20: gadget {:.1} us, ours {:.1} us, {:.1}x",
        gadget * 1e6,
        ours * 1e6,
        gadget / ours
    );
    let gadget = per_call(&mut cs, &|cs| {
        leaves[0].to_bits_le(cs.namespace(|| "bits")).unwrap();
        leaves[0].clone()
    });
    let ours = per_call(&mut cs, &|cs| {
        witness_gadgets::to_bits_le(cs.namespace(|| "bits"), &leaves[0]).unwrap();
        leaves[0].clone()
    });
    println!("to_bits_le, best of 20: gadget {:.1} us, ours {:.1} us, {:.1}x", gadget * 1e6, ours * 1e6, gadget / ours);

    let constants = neptune::poseidon::PoseidonConstants::<Fr, typenum::U11>::new();
    let column: Vec<AllocatedNum<Fr>> =
        (0..11).map(|i| AllocatedNum::alloc(cs.namespace(|| format!("c{i}")), || Ok(Fr::random(&mut rng))).unwrap()).collect();
    let gadget = per_call(&mut cs, &|cs| neptune::circuit::poseidon_hash(cs.namespace(|| "h"), column.clone(), &constants).unwrap());
    let ours = per_call(&mut cs, &|cs| witness_gadgets::poseidon_hash(cs.namespace(|| "h"), column.clone(), &constants).unwrap());
    println!("Poseidon arity 11 (a column), best of 20: gadget {:.1} us, ours {:.1} us, {:.1}x", gadget * 1e6, ours * 1e6, gadget / ours);
}

/// An authentication path of shape `U`-`V`-`W` with `base` base levels:
/// random siblings and indices, as a vanilla proof's `as_options()`.
fn random_path<U: typenum::Unsigned, V: typenum::Unsigned, W: typenum::Unsigned>(
    rng: &mut ChaCha8Rng,
    base: usize,
) -> Vec<witness_gadgets::PathLevel> {
    let level =
        |rng: &mut ChaCha8Rng, arity: usize| ((1..arity).map(|_| Some(Fr::random(&mut *rng))).collect(), Some(rng.gen_range(0..arity)));
    let mut path: Vec<_> = (0..base).map(|_| level(rng, U::to_usize())).collect();
    for arity in [V::to_usize(), W::to_usize()] {
        if arity > 0 {
            path.push(level(rng, arity));
        }
    }
    path
}

/// The root `leaf` opens to along `path`, by filecoin-hashers' own
/// circuits (`hash_multi_leaf_circuit` per level) into a scratch system.
fn path_root<H: filecoin_hashers::Hasher, U, V, W>(leaf: Fr, path: &[witness_gadgets::PathLevel]) -> Fr
where
    U: filecoin_hashers::PoseidonArity,
    V: filecoin_hashers::PoseidonArity,
    W: filecoin_hashers::PoseidonArity,
{
    let mut cs = witness_cs();
    let base = path.len() - [V::to_usize(), W::to_usize()].iter().filter(|&&a| a > 0).count();
    let mut cur = leaf;
    for (i, (siblings, index)) in path.iter().enumerate() {
        let mut preimage: Vec<Fr> = siblings.iter().map(|s| s.unwrap()).collect();
        preimage.insert(index.unwrap(), cur);
        let nums: Vec<AllocatedNum<Fr>> = preimage.iter().map(|v| AllocatedNum::alloc(&mut cs, || Ok(*v)).unwrap()).collect();
        let h = match (i < base, i == base && V::to_usize() > 0) {
            (true, _) => H::Function::hash_multi_leaf_circuit::<U, _>(&mut cs, &nums, i),
            (false, true) => H::Function::hash_multi_leaf_circuit::<V, _>(&mut cs, &nums, i),
            (false, false) => H::Function::hash_multi_leaf_circuit::<W, _>(&mut cs, &nums, i),
        };
        cur = h.unwrap().get_value().unwrap();
    }
    cur
}

/// storage-proofs-core's `PoRCircuit::synthesize` against ours on a random
/// path of `base` base levels: into `WitnessOnly` the same inputs, input
/// positions and witness; into a test system (`test_cs`) satisfied with
/// the same constraints. The leaf and root are allocated already (as a
/// PoRep partition's are) when private, values otherwise.
fn check_por<H, U, V, W>(rng: &mut ChaCha8Rng, base: usize, private: bool, test_cs: bool)
where
    H: 'static + filecoin_hashers::Hasher,
    U: 'static + filecoin_hashers::PoseidonArity,
    V: 'static + filecoin_hashers::PoseidonArity,
    W: 'static + filecoin_hashers::PoseidonArity,
{
    use storage_proofs_core::gadgets::por::PoRCircuit;
    use storage_proofs_core::gadgets::variables::Root;
    use storage_proofs_core::merkle::{DiskStore, MerkleTreeWrapper};
    type Tree<H, U, V, W> = MerkleTreeWrapper<H, DiskStore<<H as filecoin_hashers::Hasher>::Domain>, U, V, W>;

    let path = random_path::<U, V, W>(rng, base);
    let leaf = Fr::random(&mut *rng);
    let root = path_root::<H, U, V, W>(leaf, &path);
    fn ends_in<CS: ConstraintSystem<Fr>>(cs: &mut CS, private: bool, leaf: Fr, root: Fr) -> (Root<Fr>, Root<Fr>) {
        if private {
            let mut var = |name: &str, v: Fr| Root::Var(AllocatedNum::alloc(cs.namespace(|| name.to_string()), || Ok(v)).unwrap());
            (var("leaf", leaf), var("root", root))
        } else {
            (Root::Val(Some(leaf)), Root::Val(Some(root)))
        }
    }
    let what = format!("{} {}-{}-{} base {base} private {private}", H::name(), U::to_usize(), V::to_usize(), W::to_usize());

    let mut gadget_cs = witness_cs();
    let (l, r) = ends_in(&mut gadget_cs, private, leaf, root);
    PoRCircuit::<Tree<H, U, V, W>>::synthesize(gadget_cs.namespace(|| "por"), l, path.clone().into(), r, private).unwrap();
    let mut ours_cs = witness_cs();
    let (l, r) = ends_in(&mut ours_cs, private, leaf, root);
    witness_gadgets::por::<H, U, V, W, _>(ours_cs.namespace(|| "por"), l, path.clone(), r, private).unwrap();
    assert_eq!(ours_cs.input_assignment, gadget_cs.input_assignment, "{what}: inputs");
    assert_eq!(ours_cs.input_positions, gadget_cs.input_positions, "{what}: input positions");
    assert_eq!(ours_cs.aux_assignment.len(), gadget_cs.aux_assignment.len(), "{what}: aux count");
    assert!(ours_cs.aux_assignment == gadget_cs.aux_assignment, "{what}: witness differs");

    if test_cs {
        let mut ours = TestConstraintSystem::<Fr>::new();
        let (l, r) = ends_in(&mut ours, private, leaf, root);
        witness_gadgets::por::<H, U, V, W, _>(ours.namespace(|| "por"), l, path.clone(), r, private).unwrap();
        assert!(ours.is_satisfied(), "{what}: {:?}", ours.which_is_unsatisfied());
        let mut gadget = TestConstraintSystem::<Fr>::new();
        let (l, r) = ends_in(&mut gadget, private, leaf, root);
        PoRCircuit::<Tree<H, U, V, W>>::synthesize(gadget.namespace(|| "por"), l, path.into(), r, private).unwrap();
        assert_eq!(ours.num_constraints(), gadget.num_constraints(), "{what}: constraints");
        assert_eq!(ours.num_inputs(), gadget.num_inputs(), "{what}: inputs");
    }
}

#[test]
fn por_witness_matches_por_circuit() {
    use filecoin_hashers::poseidon::PoseidonHasher;
    use filecoin_hashers::sha256::Sha256Hasher;
    use typenum::{U0, U2, U8};
    let mut rng = ChaCha8Rng::seed_from_u64(0x90e);
    for private in [true, false] {
        // comm_d: SHA-256 binary trees, up to a 32 GiB sector's 30 levels.
        for base in [1, 3, 11, 30] {
            check_por::<Sha256Hasher, U2, U0, U0>(&mut rng, base, private, base == 3);
        }
        // tree_c and tree_r_last: 8-0-0 below 32 GiB, 8-8-0 at 32, 8-8-2 at 64.
        for base in [1, 4] {
            check_por::<PoseidonHasher, U8, U0, U0>(&mut rng, base, private, base == 1);
        }
        check_por::<PoseidonHasher, U8, U8, U0>(&mut rng, 9, private, true);
        check_por::<PoseidonHasher, U8, U8, U2>(&mut rng, 9, private, false);
        check_por::<PoseidonHasher, U8, U8, U2>(&mut rng, 1, private, true);
    }
}

/// A path with a value missing (a blank circuit's) goes to `PoRCircuit`:
/// into a witness generator it fails as the circuit does.
#[test]
fn por_with_unknown_values_is_por_circuit() {
    use filecoin_hashers::poseidon::PoseidonHasher;
    use storage_proofs_core::gadgets::variables::Root;
    use typenum::{U0, U8};
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut path = random_path::<U8, U8, U0>(&mut rng, 2);
    path[1].0[3] = None;
    let mut cs = witness_cs();
    let r = witness_gadgets::por::<PoseidonHasher, U8, U8, U0, _>(
        cs.namespace(|| "por"),
        Root::Val(Some(Fr::ONE)),
        path,
        Root::Val(Some(Fr::ONE)),
        true,
    );
    assert!(matches!(r, Err(SynthesisError::AssignmentMissing)), "{r:?}");
}

/// One 32 GiB sector's inclusion paths into `WitnessOnly`, `PoRCircuit`
/// against ours: comm_d's (SHA-256, 30 levels) and tree_c's (Poseidon
/// 8-8-0, 9 + 1 levels). `cargo test --release --workspace --test
/// witness_gadgets -- --ignored --nocapture`.
#[test]
#[ignore]
fn por_witness_speed() {
    use filecoin_hashers::poseidon::PoseidonHasher;
    use filecoin_hashers::sha256::Sha256Hasher;
    use storage_proofs_core::gadgets::por::PoRCircuit;
    use storage_proofs_core::gadgets::variables::Root;
    use storage_proofs_core::merkle::{DiskStore, MerkleTreeWrapper};
    use typenum::{U0, U2, U8};

    fn time<H, U, V, W>(rng: &mut ChaCha8Rng, base: usize, what: &str)
    where
        H: 'static + filecoin_hashers::Hasher,
        U: 'static + filecoin_hashers::PoseidonArity,
        V: 'static + filecoin_hashers::PoseidonArity,
        W: 'static + filecoin_hashers::PoseidonArity,
    {
        let path = random_path::<U, V, W>(rng, base);
        let (leaf, root) = (Fr::random(&mut *rng), Fr::random(&mut *rng));
        let mut cs = witness_cs();
        let inputs_end = (cs.input_assignment.len(), cs.aux_assignment.len());
        let mut best = |f: &dyn Fn(&mut WitnessOnly)| {
            let mut best = f64::MAX;
            for _ in 0..5 {
                cs.input_assignment.truncate(inputs_end.0);
                cs.input_positions.truncate(inputs_end.0);
                cs.aux_assignment.truncate(inputs_end.1);
                let t = std::time::Instant::now();
                f(&mut cs);
                best = best.min(t.elapsed().as_secs_f64());
            }
            best
        };
        let gadget = best(&|cs| {
            PoRCircuit::<MerkleTreeWrapper<H, DiskStore<H::Domain>, U, V, W>>::synthesize(
                cs.namespace(|| "por"),
                Root::Val(Some(leaf)),
                path.clone().into(),
                Root::Val(Some(root)),
                true,
            )
            .unwrap()
        });
        let ours = best(&|cs| {
            witness_gadgets::por::<H, U, V, W, _>(cs.namespace(|| "por"), Root::Val(Some(leaf)), path.clone(), Root::Val(Some(root)), true)
                .unwrap()
        });
        println!("{what}, best of 5, one core: PoRCircuit {:.2} ms, ours {:.3} ms, {:.1}x", gadget * 1e3, ours * 1e3, gadget / ours);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(32);
    time::<Sha256Hasher, U2, U0, U0>(&mut rng, 30, "comm_d inclusion path, 32 GiB (SHA-256, 30 levels)");
    time::<PoseidonHasher, U8, U8, U0>(&mut rng, 9, "tree_c inclusion path, 32 GiB (Poseidon 8-8-0, 10 levels)");
}
