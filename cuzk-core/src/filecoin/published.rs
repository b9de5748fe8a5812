//! Parameter files recognised by their published digests: the list
//! filecoin-proofs ships (storage-proofs-core's `parameters.json`, file
//! name → digest), so the official files need no point-by-point check.
//!
//! The digest is filecoin-proofs' own: BLAKE2b-512 of the whole file, hex,
//! its first 32 characters.

use crate::srs::FileDigest;
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
    let mut digest = file_digest_state();
    digest.update(bytes);
    digest.finish()
}

/// [`file_digest`] fed a file's bytes in order, as a streamed read takes
/// them.
pub fn file_digest_state() -> Box<dyn FileDigest> {
    Box::new(Blake2b(blake2b_simd::Params::new().to_state()))
}

struct Blake2b(blake2b_simd::State);

impl FileDigest for Blake2b {
    fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(self: Box<Self>) -> String {
        self.0.finalize().to_hex()[..32].to_string()
    }
}
