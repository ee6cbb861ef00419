//! lode's embeddings of the built-in model against Python model2vec's
//! (`tests/fixtures/reference.json`, made by `scripts/gen-embed-fixture.sh`).

use lode_embed::StaticModel;
use serde::Deserialize;

#[derive(Deserialize)]
struct Fixture {
    dim: usize,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    text: String,
    ids: Vec<u32>,
    embedding: Vec<f32>,
}

fn fixture() -> Fixture {
    serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/reference.json"
    )))
    .expect("fixture parses")
}

const REGENERATE: &str =
    "if the model changed, regenerate the fixture with scripts/gen-embed-fixture.sh";

#[test]
fn token_ids_match_python() {
    let model = StaticModel::builtin();
    for case in fixture().cases {
        assert_eq!(
            model.token_ids(&case.text),
            case.ids,
            "text {:?}; {REGENERATE}",
            case.text
        );
    }
}

#[test]
fn embeddings_match_python() {
    let model = StaticModel::builtin();
    let fx = fixture();
    assert_eq!(model.dim(), fx.dim);
    let texts: Vec<&str> = fx.cases.iter().map(|c| c.text.as_str()).collect();
    let rows = model.encode(&texts);
    let mut worst = (0f32, 1f32);
    for (case, row) in fx.cases.iter().zip(rows.chunks(fx.dim)) {
        let max_abs = row
            .iter()
            .zip(&case.embedding)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        let dot: f32 = row.iter().zip(&case.embedding).map(|(a, b)| a * b).sum();
        let na = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        let nb = case.embedding.iter().map(|x| x * x).sum::<f32>().sqrt();
        let cos = if na == 0.0 && nb == 0.0 {
            1.0
        } else {
            dot / (na * nb)
        };
        assert!(
            max_abs <= 1e-4 && cos >= 0.9999,
            "text {:?}: max |diff| {max_abs}, cosine {cos}; {REGENERATE}",
            case.text
        );
        worst = (worst.0.max(max_abs), worst.1.min(cos));
    }
    println!(
        "{} cases: max |diff| {:.2e}, min cosine {:.7}",
        fx.cases.len(),
        worst.0,
        worst.1
    );
}
