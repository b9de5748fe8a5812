//! The built-in circuits are satisfied, have the advertised shape, and the
//! witness-only mode computes the same assignment as full synthesis.

use bellpepper_core::test_cs::TestConstraintSystem;
use bellpepper_core::Circuit;
use blstrs::Scalar as Fr;
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::cs::{generate_witness, synthesize};
use ff::Field;

fn specs() -> Vec<CircuitSpec> {
    vec![
        CircuitSpec::Sha256 { blocks: 1 },
        CircuitSpec::Mimc { hashes: 1 },
        CircuitSpec::Synthetic { constraints: 5000, inputs: 8 },
        CircuitSpec::Synthetic { constraints: 20, inputs: 1 },
    ]
}

#[test]
fn builtin_circuits_are_satisfied() {
    for spec in specs() {
        let mut cs = TestConstraintSystem::<Fr>::new();
        spec.instance(42).synthesize(&mut cs).unwrap();
        assert!(cs.is_satisfied(), "{spec}: unsatisfied at {:?}", cs.which_is_unsatisfied());
    }
}

#[test]
fn witness_only_matches_full_synthesis() {
    for spec in specs() {
        let full = synthesize(spec.instance(7)).unwrap();
        let w = generate_witness(spec.instance(7)).unwrap();
        assert_eq!(full.input_assignment, w.input_assignment, "{spec}");
        assert_eq!(full.aux_assignment, w.aux_assignment, "{spec}");
    }
}

#[test]
fn synthetic_has_exact_size_and_filecoin_like_density() {
    for constraints in [1000, 4096, 100_003] {
        let spec = CircuitSpec::Synthetic { constraints, inputs: 8 };
        let pa = synthesize(spec.instance(3)).unwrap();
        assert_eq!(pa.num_constraints(), constraints);
        let aux = pa.aux_assignment.len() as f64;
        let a_density = pa.a_aux_density.count() as f64 / aux;
        let b_density = pa.b_aux_density.count() as f64 / aux;
        let zero_one = pa.aux_assignment.iter().filter(|x| x.is_zero_vartime() || **x == Fr::ONE).count() as f64 / aux;
        eprintln!("{spec}: a_aux {a_density:.3}, b_aux {b_density:.3}, 0/1 {zero_one:.3}");
        assert!(a_density > 0.98, "A density {a_density}");
        assert!((0.15..0.35).contains(&b_density), "B density {b_density}");
        assert!((0.8..0.97).contains(&zero_one), "0/1 fraction {zero_one}");
        // Different seeds, same structure.
        let other = synthesize(spec.instance(4)).unwrap();
        assert_eq!(other.a_aux_density, pa.a_aux_density);
        assert_eq!(other.b_aux_density, pa.b_aux_density);
        assert_ne!(other.aux_assignment, pa.aux_assignment);
    }
}

#[test]
fn spec_parsing_errors_say_what_is_wrong() {
    for (s, needle) in [
        ("sha256", "wrong number"),
        ("sha256:0", "at least 1"),
        ("blake:3", "unknown circuit"),
        ("synthetic:2^x", "not a number"),
        ("synthetic:10:100", "cannot hold"),
    ] {
        let e = s.parse::<CircuitSpec>().unwrap_err().to_string();
        assert!(e.contains(needle), "{s}: {e}");
    }
    assert_eq!("synthetic:2^20".parse::<CircuitSpec>().unwrap(), CircuitSpec::Synthetic { constraints: 1 << 20, inputs: 8 });
}
