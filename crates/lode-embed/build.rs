//! Fingerprints the built-in model at compile time, so that a process never
//! hashes 7.6 MB to learn which model its binary carries.

use std::fs;

/// FNV-1a, 64 bits: enough to tell two model files apart; not a security hash.
fn fnv1a(state: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(state, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn main() {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for file in [
        "model/config.json",
        "model/model.safetensors",
        "model/tokenizer.json",
    ] {
        println!("cargo:rerun-if-changed={file}");
        let bytes = fs::read(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        h = fnv1a(h, &(bytes.len() as u64).to_le_bytes());
        h = fnv1a(h, &bytes);
    }
    println!("cargo:rustc-env=LODE_BUILTIN_MODEL_FNV={h:016x}");
}
