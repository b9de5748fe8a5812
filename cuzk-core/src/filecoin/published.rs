//! Parameter files recognised by their published digests: the list
//! filecoin-proofs ships (storage-proofs-core's `parameters.json`, file
//! name → digest), so the official files need no point-by-point check.
//!
//! The digest is filecoin-proofs' own: BLAKE2b-512 of the whole file, hex,
//! its first 32 characters.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use storage_proofs_core::parameter_cache::PARAMETERS;

/// Digests of parameter files by file name (`v28-<circuit id>.params`).
#[derive(Clone, Debug)]
pub struct PublishedDigests(Arc<HashMap<String, String>>);

impl PublishedDigests {
    /// The official Filecoin parameter files of the filecoin-proofs
    /// version we build with.
    pub fn filecoin() -> Self {
        static LIST: OnceLock<PublishedDigests> = OnceLock::new();
        LIST.get_or_init(|| Self::new(PARAMETERS.iter().map(|(name, data)| (name.clone(), data.digest.clone())))).clone()
    }

    /// A list of (file name, digest) pairs.
    pub fn new(entries: impl IntoIterator<Item = (String, String)>) -> Self {
        Self(Arc::new(entries.into_iter().collect()))
    }

    /// The digest published for a file name.
    pub fn get(&self, file_name: &str) -> Option<&str> {
        self.0.get(file_name).map(String::as_str)
    }
}

/// The digest of a file's bytes as the published list states it.
pub fn file_digest(bytes: &[u8]) -> String {
    let hash = blake2b_simd::Params::new().hash(bytes);
    hash.to_hex()[..32].to_string()
}
