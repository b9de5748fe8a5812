//! Extensible synthesis (what Filecoin's PoSt and PoRep circuits use): a
//! part synthesized in its own constraint system and appended. A part that
//! uses the constant one in a B row must mark our one as used in B, as
//! bellperson does; otherwise the B query no longer lines up with the
//! parameters. Checked against bellperson 0.27 byte for byte.

use bellpepper_core::{num::AllocatedNum, Circuit, ConstraintSystem, SynthesisError};
use bellperson::groth16 as bp;
use blstrs::Scalar as Fr;
use cuzk_core::groth16;
use cuzk_tests::*;

/// x·(y + 1) = z with x, z public, the product in an appended part when
/// the constraint system is extensible (its one appears only in B there).
#[derive(Clone)]
struct Appended {
    x: Option<Fr>,
    y: Option<Fr>,
}

fn part<CS: ConstraintSystem<Fr>>(cs: &mut CS, x: Option<Fr>, y: Option<Fr>) -> Result<(), SynthesisError> {
    let xv = cs.alloc_input(|| "x", || x.ok_or(SynthesisError::AssignmentMissing))?;
    let yv = AllocatedNum::alloc(cs.namespace(|| "y"), || y.ok_or(SynthesisError::AssignmentMissing))?;
    let z = x.zip(y).map(|(x, y)| x * (y + Fr::from(1)));
    let zv = cs.alloc_input(|| "z", || z.ok_or(SynthesisError::AssignmentMissing))?;
    cs.enforce(|| "x*(y+1)=z", |lc| lc + xv, |lc| lc + yv.get_variable() + CS::one(), |lc| lc + zv);
    Ok(())
}

impl Circuit<Fr> for Appended {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        if CS::is_extensible() {
            // As storage-proofs' PoSt circuit does it.
            let mut other = CS::new();
            other.alloc_input(|| "temp ONE", || Ok(Fr::from(1)))?;
            part(&mut other, self.x, self.y)?;
            cs.extend(&other);
            Ok(())
        } else {
            part(cs, self.x, self.y)
        }
    }
}

#[test]
fn appended_part_using_one_in_b_matches_bellperson() {
    let mut rng = rng("cs_extend");
    let blank = Appended { x: None, y: None };
    let params = groth16::generate_random_parameters(blank, &mut rng).unwrap();
    let bp_params = to_bellperson(&params);
    let c = Appended { x: Some(Fr::from(3)), y: Some(Fr::from(4)) };
    let (r, s) = (Fr::from(5), Fr::from(6));
    let ours = groth16::prove_deterministic(&params, c.clone(), r, s).unwrap();
    let theirs = bp::create_proof(c.clone(), &bp_params, r, s).unwrap();
    assert_eq!(ours.to_bytes().to_vec(), bp_proof_bytes(&theirs));
    let pvk = groth16::prepare_verifying_key(&params.vk);
    assert!(groth16::verify_proof(&pvk, &ours, &[Fr::from(3), Fr::from(15)]).unwrap());
    // A PCE records the part synthesized in place (the recorder is not
    // extensible); its assignment and proof equal the appended synthesis's.
    let pce = cuzk_core::pce::record("appended", Appended { x: None, y: None }).unwrap();
    let pa = pce.synthesize(c.clone()).unwrap();
    assert!(pa == cuzk_core::cs::synthesize(c).unwrap(), "PCE assignment differs from extensible synthesis");
    let from_pce = groth16::prove_synthesized_deterministic(&params, &[pa], &[(r, s)]).unwrap();
    assert_eq!(from_pce[0].to_bytes(), ours.to_bytes());
}
