//! Witness generators for bellperson gadgets: the same variables in the same
//! order and the same results as the gadgets, computed as plain values when
//! the constraint system only wants the witness
//! ([`bellpepper_core::ConstraintSystem::is_witness_generator`]); the gadgets
//! themselves otherwise.
//!
//! - [`sha256()`]: `bellperson::gadgets::sha256::sha256`;
//! - [`create_label()`] (feature `filecoin`): storage-proofs-porep's
//!   `create_label_circuit`, a SHA-256 over a node's parents packed into a
//!   field element.

mod aux_sink;
#[cfg(feature = "filecoin")]
mod create_label;
mod sha256;
mod word;

#[cfg(feature = "filecoin")]
pub use create_label::create_label;
pub use sha256::sha256;
