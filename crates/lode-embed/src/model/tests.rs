use super::*;

#[test]
fn the_builtin_models_compiled_tokenizer_and_id_are_what_loading_its_files_gives() {
    let builtin = StaticModel::builtin();
    let from_files =
        StaticModel::from_bytes(BUILTIN_CONFIG, BUILTIN_MODEL, BUILTIN_TOKENIZER).unwrap();
    assert_eq!(builtin.id(), from_files.id());
    assert_eq!(builtin.tokenizer, from_files.tokenizer);
    assert_eq!(
        WordPiece::from_image(BUILTIN_TOKENIZER_IMAGE).as_ref(),
        Some(&from_files.tokenizer)
    );
}

#[test]
fn builtin_loads_and_embeds() {
    let m = StaticModel::builtin();
    assert_eq!(m.dim(), 256);
    assert!(m.normalizes());
    assert!(m.id().starts_with("model2vec-d256-"), "{}", m.id());
    let v = m.encode(&["fn main() {}", ""]);
    assert_eq!(v.len(), 512);
    let norm: f32 = v[..256].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-5, "{norm}");
    assert!(
        v[256..].iter().all(|&x| x == 0.0),
        "empty text embeds to zero"
    );
}

/// A tokenizer.json of three tokens: `[UNK]`, `a` and `b`.
const TINY_TOKENIZER: &str = r#"{"normalizer": {"type": "BertNormalizer"},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 1, "b": 2}}}"#;

/// One tensor of a test model file: name, dtype, shape and raw data.
type TestTensor<'a> = (&'a str, &'a str, &'a [usize], Vec<u8>);

fn safetensors_file(tensors: &[TestTensor<'_>]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        let offsets = [data.len(), data.len() + bytes.len()];
        let tensor = serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": offsets});
        header.insert(name.to_string(), tensor);
        data.extend_from_slice(bytes);
    }
    let header = serde_json::to_vec(&header).unwrap();
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend(header);
    file.extend(data);
    file
}

fn le_bytes<const N: usize>(values: impl IntoIterator<Item = [u8; N]>) -> Vec<u8> {
    values.into_iter().flatten().collect()
}

fn f32s(values: &[f32]) -> Vec<u8> {
    le_bytes(values.iter().map(|v| v.to_le_bytes()))
}

fn i32s(values: &[i32]) -> Vec<u8> {
    le_bytes(values.iter().map(|v| v.to_le_bytes()))
}

fn tiny(config: &str, tensors: &[TestTensor<'_>]) -> Result<StaticModel> {
    let model = safetensors_file(tensors);
    StaticModel::from_bytes(config.as_bytes(), &model, TINY_TOKENIZER.as_bytes())
}

fn tiny_err(config: &str, tensors: &[TestTensor<'_>]) -> String {
    tiny(config, tensors).unwrap_err().to_string()
}

/// A 3x2 int8 table, one row per token.
fn i8_table() -> TestTensor<'static> {
    ("embeddings", "I8", &[3, 2], vec![0, 0, 1, 2, 254, 4])
}

#[test]
fn config_json_defaults_and_errors() {
    let m = tiny("{}", &[i8_table()]).unwrap();
    assert_eq!(
        (m.normalize, m.max_length),
        (false, Some(DEFAULT_MAX_LENGTH))
    );
    let m = tiny(r#"{"normalize": true, "max_length": null}"#, &[i8_table()]).unwrap();
    assert_eq!((m.normalize, m.max_length), (true, None));
    for (config, reason) in [
        (r#"{"normalize": 1}"#, r#""normalize" is not true or false"#),
        (
            r#"{"max_length": 0}"#,
            r#""max_length" is not a positive integer"#,
        ),
        (
            r#"{"hidden_dim": "2"}"#,
            r#""hidden_dim" is not an integer"#,
        ),
    ] {
        assert_eq!(
            tiny_err(config, &[i8_table()]),
            format!("<bytes>/config.json: {reason}")
        );
    }
}

#[test]
fn an_owned_int8_table_embeds_its_rows() {
    let m = tiny("{}", &[i8_table()]).unwrap();
    assert_eq!(m.tensors.dtype, Dtype::I8);
    assert_eq!(
        m.encode(&["a", "b", "a b"]),
        [1.0, 2.0, -2.0, 4.0, -0.5, 3.0]
    );
}

#[test]
fn a_mapping_and_weights_pick_and_scale_rows() {
    let m = tiny(
        "{}",
        &[
            (
                "embedding.weight",
                "F32",
                &[2, 2],
                f32s(&[1.0, 0.0, 0.0, 1.0]),
            ),
            ("mapping", "I32", &[3], i32s(&[0, 0, 1])),
            ("weights", "F32", &[3], f32s(&[1.0, 2.0, 0.5])),
        ],
    )
    .unwrap();
    assert_eq!(m.tensors.rows, 2);
    assert_eq!(m.encode(&["a", "b"]), [2.0, 0.0, 0.0, 0.5]);
}

#[test]
fn tensors_that_do_not_fit_are_errors_naming_the_model_file() {
    let rows = ("embeddings", "F32", &[2, 2][..], f32s(&[0.0; 4]));
    let cases: [(Vec<TestTensor<'_>>, &str); 11] = [
        (vec![], r#"no "embeddings" tensor of a readable type"#),
        (
            vec![("embeddings", "I8", &[6], vec![0; 6])],
            r#"tensor "embeddings" has shape [6], expected 2 dimensions"#,
        ),
        (
            vec![("embeddings", "I8", &[3, 0], vec![])],
            r#"tensor "embeddings" is empty (3x0)"#,
        ),
        (
            vec![("embeddings", "I32", &[3, 2], i32s(&[0; 6]))],
            r#"tensor "embeddings" has unsupported type I32"#,
        ),
        (
            vec![i8_table(), ("weights", "I8", &[3], vec![1; 3])],
            r#"tensor "weights" has unsupported type I8"#,
        ),
        (
            vec![i8_table(), ("weights", "F32", &[2], f32s(&[1.0; 2]))],
            r#"tensor "weights" has 2 values for a vocabulary of 3 tokens"#,
        ),
        (
            vec![rows.clone(), ("mapping", "F32", &[3], f32s(&[0.0; 3]))],
            r#"tensor "mapping" is not a non-negative I32/I64 vector"#,
        ),
        (
            vec![rows.clone(), ("mapping", "I32", &[3], i32s(&[0, -1, 1]))],
            r#"tensor "mapping" is not a non-negative I32/I64 vector"#,
        ),
        (
            vec![rows.clone(), ("mapping", "I32", &[2], i32s(&[0, 1]))],
            r#"tensor "mapping" has 2 entries for a vocabulary of 3 tokens"#,
        ),
        (
            vec![rows.clone(), ("mapping", "I32", &[3], i32s(&[0, 1, 2]))],
            r#"tensor "mapping" points at row 2 of 2"#,
        ),
        (
            vec![rows],
            "embeddings have 2 rows but tokenizer.json has 3 tokens",
        ),
    ];
    for (tensors, reason) in cases {
        assert_eq!(
            tiny_err("{}", &tensors),
            format!("<bytes>/model.safetensors: {reason}")
        );
    }
    assert_eq!(
        tiny_err(r#"{"hidden_dim": 3}"#, &[i8_table()]),
        "<bytes>/model.safetensors: embeddings have 2 columns but config.json says hidden_dim 3"
    );
}

#[test]
fn batch_equals_one_by_one_and_is_deterministic() {
    let m = StaticModel::builtin();
    let texts: Vec<String> = (0..200)
        .map(|i| format!("fn handler_{i}(req: Request) -> Response"))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let batch = m.encode(&refs); // parallel path
    let mut one = vec![0.0; m.dim()];
    for (i, t) in refs.iter().enumerate() {
        m.encode_one(t, &mut one);
        assert_eq!(&batch[i * 256..(i + 1) * 256], &one[..]);
    }
    assert_eq!(batch, m.encode(&refs));
}
