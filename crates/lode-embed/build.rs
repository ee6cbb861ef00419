//! Prepares the built-in model at compile time, so that a process does not
//! pay for it at every start:
//!
//! - `LODE_BUILTIN_MODEL_FNV`: a fingerprint of its files, for index
//!   fingerprints that need no model load (`StaticModel::builtin_fingerprint`);
//! - `LODE_BUILTIN_MODEL_ID_HASH`: the blake3 hash of `StaticModel::id` (7.6 MB
//!   hashed once here rather than by every query that names the model);
//! - `$OUT_DIR/builtin-tokenizer.bin`: its tokenizer, parsed and with its tries
//!   built, as the image `tokenizer::image` reads (the same code, included).

use std::fs;

#[allow(dead_code)]
#[path = "src/tokenizer.rs"]
mod tokenizer;

include!("src/embed_version.rs");

/// FNV-1a, 64 bits: enough to tell two model files apart; not a security hash.
fn fnv1a(state: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(state, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn main() {
    println!("cargo:rerun-if-changed=src/tokenizer.rs");
    println!("cargo:rerun-if-changed=src/embed_version.rs");
    let files = [
        "model/config.json",
        "model/model.safetensors",
        "model/tokenizer.json",
    ];
    let mut fnv = 0xcbf2_9ce4_8422_2325u64;
    // As `model::content_id` hashes them.
    let mut id = blake3::Hasher::new();
    id.update(b"lode-embed model2vec");
    id.update(&EMBED_VERSION.to_le_bytes());
    let mut contents = Vec::new();
    for file in files {
        println!("cargo:rerun-if-changed={file}");
        let bytes = fs::read(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        fnv = fnv1a(fnv, &(bytes.len() as u64).to_le_bytes());
        fnv = fnv1a(fnv, &bytes);
        id.update(&(bytes.len() as u64).to_le_bytes());
        id.update(&bytes);
        contents.push(bytes);
    }
    println!("cargo:rustc-env=LODE_BUILTIN_MODEL_FNV={fnv:016x}");
    println!(
        "cargo:rustc-env=LODE_BUILTIN_MODEL_ID_HASH={}",
        &id.finalize().to_hex()[..16]
    );
    let tokenizer = tokenizer::WordPiece::from_json(&contents[2])
        .unwrap_or_else(|e| panic!("model/tokenizer.json: {e}"));
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    fs::write(format!("{out}/builtin-tokenizer.bin"), tokenizer.to_image())
        .expect("writing the tokenizer image");
}
