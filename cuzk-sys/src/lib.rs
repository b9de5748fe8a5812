//! Raw bindings to cuzk's CUDA code in `native/`, plus thin safe wrappers.
//!
//! Empty until the CUDA toolchain issue lands: the CPU backend in
//! `cuzk-core` does not depend on anything here.
