//! Bad model directories give one clear line naming the file, never a panic.

use std::fs;
use std::path::Path;

use lode_embed::StaticModel;

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/model");

/// A copy of the built-in model in a temporary directory, to break.
fn copy_model() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in ["config.json", "model.safetensors", "tokenizer.json"] {
        fs::copy(Path::new(MODEL).join(f), dir.path().join(f)).unwrap();
    }
    dir
}

fn load_err(dir: &Path) -> String {
    let err = StaticModel::from_dir(dir).expect_err("loading must fail");
    let msg = err.to_string();
    assert!(!msg.contains('\n'), "one line: {msg}");
    msg
}

#[test]
fn a_good_copy_loads_with_the_builtin_id() {
    let dir = copy_model();
    let m = StaticModel::from_dir(dir.path()).unwrap();
    assert_eq!(m.id(), StaticModel::builtin().id());
}

#[test]
fn missing_directory() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("no-such-model");
    let msg = load_err(&gone);
    assert!(msg.starts_with(&gone.display().to_string()), "{msg}");
    assert!(msg.contains("model directory not found"), "{msg}");
}

#[test]
fn missing_file() {
    let dir = copy_model();
    fs::remove_file(dir.path().join("tokenizer.json")).unwrap();
    let msg = load_err(dir.path());
    assert!(msg.contains("tokenizer.json: missing"), "{msg}");
}

#[test]
fn corrupt_safetensors() {
    let dir = copy_model();
    let path = dir.path().join("model.safetensors");
    fs::write(&path, b"this is not a safetensors file at all").unwrap();
    let msg = load_err(dir.path());
    assert!(msg.starts_with(&path.display().to_string()), "{msg}");
    assert!(msg.contains("not a safetensors file"), "{msg}");
}

#[test]
fn truncated_safetensors() {
    let dir = copy_model();
    let path = dir.path().join("model.safetensors");
    let bytes = fs::read(&path).unwrap();
    fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let msg = load_err(dir.path());
    assert!(
        msg.contains("model.safetensors: corrupt safetensors file"),
        "{msg}"
    );
}

#[test]
fn dimension_disagrees_with_config() {
    let dir = copy_model();
    let path = dir.path().join("config.json");
    let config = fs::read_to_string(&path).unwrap();
    fs::write(
        &path,
        config.replace("\"hidden_dim\": 256", "\"hidden_dim\": 384"),
    )
    .unwrap();
    let msg = load_err(dir.path());
    assert!(msg.contains("model.safetensors"), "{msg}");
    assert!(
        msg.contains("256 columns but config.json says hidden_dim 384"),
        "{msg}"
    );
}

#[test]
fn corrupt_config_and_tokenizer() {
    let dir = copy_model();
    fs::write(dir.path().join("config.json"), "{ not json").unwrap();
    assert!(load_err(dir.path()).contains("config.json: not a JSON object"));

    let dir = copy_model();
    fs::write(
        dir.path().join("tokenizer.json"),
        r#"{"model": {"type": "BPE"}}"#,
    )
    .unwrap();
    let msg = load_err(dir.path());
    assert!(
        msg.contains("tokenizer.json: unsupported tokenizer (model BPE"),
        "{msg}"
    );
}

#[test]
fn vocabulary_and_rows_disagree() {
    let dir = copy_model();
    let path = dir.path().join("tokenizer.json");
    let mut tok: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    let vocab = tok["model"]["vocab"].as_object_mut().unwrap();
    let n = vocab.len();
    vocab.insert("zzzznewtoken".into(), n.into());
    fs::write(&path, serde_json::to_vec(&tok).unwrap()).unwrap();
    let msg = load_err(dir.path());
    assert!(
        msg.contains(&format!("rows but tokenizer.json has {} tokens", n + 1)),
        "{msg}"
    );
}

#[test]
fn from_bytes_names_pseudo_files() {
    let err = StaticModel::from_bytes(b"{}", b"junk", b"{}").unwrap_err();
    assert!(err.to_string().starts_with("<bytes>/"), "{err}");
}
