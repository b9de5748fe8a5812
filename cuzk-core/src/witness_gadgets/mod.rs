//! Witness generators for bellperson gadgets: the same variables in the same
//! order and the same results as the gadgets, computed as plain values when
//! the constraint system only wants the witness
//! ([`bellpepper_core::ConstraintSystem::is_witness_generator`]); the gadgets
//! themselves otherwise.
//!
//! - [`sha256()`] for `bellperson::gadgets::sha256::sha256`;
//! - [`sha256_packed()`]: filecoin-hashers' `Sha256Function::hash_circuit`
//!   (SHA-256 packed into a field element) and [`sha256_multi_leaf()`], its
//!   `hash_multi_leaf_circuit` / `hash2_circuit` (Merkle nodes of SHA-256
//!   trees such as comm_d's);
//! - [`to_bits_le()`] for `AllocatedNum::to_bits_le`;
//! - [`create_label()`] (feature `filecoin`): storage-proofs-porep's
//!   `create_label_circuit`, a SHA-256 over a node's parents packed into a
//!   field element;
//! - [`poseidon_hash()`] (feature `filecoin`): neptune's legacy
//!   `circuit::poseidon_hash`, which filecoin-hashers' Poseidon calls;
//! - [`por()`] (feature `filecoin`): storage-proofs-core's
//!   `PoRCircuit::synthesize`, a Merkle inclusion proof over SHA-256 or
//!   Poseidon trees.

mod aux_sink;
#[cfg(feature = "filecoin")]
mod create_label;
mod num_bits;
#[cfg(feature = "filecoin")]
mod por;
#[cfg(feature = "filecoin")]
mod poseidon;
mod sha256;
mod sha256_packed;
mod word;

#[cfg(feature = "filecoin")]
pub use create_label::create_label;
pub use num_bits::to_bits_le;
#[cfg(feature = "filecoin")]
pub use por::{por, PathLevel};
#[cfg(feature = "filecoin")]
pub use poseidon::poseidon_hash;
pub use sha256::sha256;
pub use sha256_packed::{sha256_multi_leaf, sha256_packed};
