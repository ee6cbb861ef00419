use super::*;

fn tiny() -> WordPiece {
    let json = r###"{
      "added_tokens": [
        {"id": 0, "content": "[PAD]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
        {"id": 1, "content": "[UNK]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}
      ],
      "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
      "pre_tokenizer": {"type": "BertPreTokenizer"},
      "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                "vocab": {"[PAD]": 0, "[UNK]": 1, "un": 2, "##aff": 3, "##able": 4, "(": 5, ")": 6, "cafe": 7, "中": 8, "x": 9}}
    }"###;
    WordPiece::from_json(json.as_bytes()).unwrap()
}

fn ids(wp: &WordPiece, text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    wp.encode(text, usize::MAX, &mut Scratch::default(), &mut out);
    out
}

#[test]
fn greedy_longest_match_and_unknown_words() {
    let wp = tiny();
    assert_eq!(ids(&wp, "unaffable"), vec![2, 3, 4]);
    assert_eq!(ids(&wp, "UnAffable (x)"), vec![2, 3, 4, 5, 9, 6]);
    // A word that cannot be split whole is one unknown token.
    assert_eq!(ids(&wp, "unaffx"), vec![1]);
    assert_eq!(ids(&wp, ""), Vec::<u32>::new());
}

#[test]
fn normalizes_accents_cjk_and_controls() {
    let wp = tiny();
    assert_eq!(ids(&wp, "Café"), vec![7]);
    assert_eq!(ids(&wp, "x中x"), vec![9, 8, 9]);
    assert_eq!(ids(&wp, "x\u{0}\u{7}x"), vec![1]); // controls vanish: "xx" is unknown
    assert_eq!(ids(&wp, "x\u{3000}x"), vec![9, 9]); // ideographic space splits
}

#[test]
fn added_tokens_match_in_raw_text() {
    let wp = tiny();
    assert_eq!(ids(&wp, "x[PAD]x"), vec![9, 0, 9]);
    assert_eq!(ids(&wp, "[UNK]"), vec![1]);
    assert_eq!(ids(&wp, "[pad]"), vec![1, 1, 1]); // lowercase text is not the token
}

#[test]
fn limit_stops_early() {
    let wp = tiny();
    let mut out = Vec::new();
    wp.encode("x x x x x", 3, &mut Scratch::default(), &mut out);
    assert_eq!(out, vec![9, 9, 9]);
}

#[test]
fn an_image_reads_back_as_the_same_tokenizer() {
    let wp = tiny();
    let image = wp.to_image();
    assert_eq!(WordPiece::from_image(&image), Some(wp));
    assert_eq!(WordPiece::from_image(&image[..image.len() - 1]), None);
    assert_eq!(WordPiece::from_image(b"not an image"), None);
    let mut longer = image.clone();
    longer.push(0);
    assert_eq!(WordPiece::from_image(&longer), None);
}

/// A BERT WordPiece tokenizer.json with the given `vocab` and `added_tokens` (JSON).
fn bert_json(vocab: &str, added_tokens: &str) -> String {
    format!(
        r#"{{"added_tokens": {added_tokens},
            "normalizer": {{"type": "BertNormalizer"}},
            "pre_tokenizer": {{"type": "BertPreTokenizer"}},
            "model": {{"type": "WordPiece", "vocab": {vocab}}}}}"#
    )
}

fn json_err(vocab: &str, added_tokens: &str) -> String {
    WordPiece::from_json(bert_json(vocab, added_tokens).as_bytes()).unwrap_err()
}

#[test]
fn rejects_vocabularies_ids_cannot_index() {
    let no_vocab = r#"{"normalizer": {"type": "BertNormalizer"},
        "pre_tokenizer": {"type": "BertPreTokenizer"}, "model": {"type": "WordPiece"}}"#;
    assert_eq!(
        WordPiece::from_json(no_vocab.as_bytes()).unwrap_err(),
        "tokenizer.json has no model.vocab map"
    );
    assert_eq!(
        json_err(r#"{"a": 0}"#, "[]"),
        r#"unknown token "[UNK]" is not in the vocabulary"#
    );
    assert_eq!(
        json_err(r#"{"[UNK]": 0, "a": 1, "a": 2}"#, "[]"),
        "tokenizer vocabulary has a duplicate token"
    );
    assert_eq!(
        json_err(r#"{"[UNK]": 0, "a": 2}"#, "[]"),
        "tokenizer vocabulary ids are not 0..n without gaps"
    );
}

#[test]
fn rejects_added_tokens_it_cannot_match() {
    let vocab = r#"{"[UNK]": 0, "a": 1}"#;
    assert_eq!(
        json_err(
            vocab,
            r#"[{"id": 0, "content": "[UNK]", "normalized": true}]"#
        ),
        r#"added token "[UNK]" uses normalized/single_word matching, which lode does not implement"#
    );
    assert_eq!(
        json_err(vocab, r#"[{"id": 2, "content": "[MASK]"}]"#),
        r#"added token "[MASK]" has id 2 outside the vocabulary"#
    );
}

#[test]
fn added_tokens_outside_the_vocabulary_count_for_the_median() {
    // Lengths 5, 1, 2; "[UNK]" is in the vocabulary, "[MASK]" (6) is not.
    let vocab = r#"{"[UNK]": 0, "a": 1, "bb": 2}"#;
    let added = r#"[{"id": 0, "content": "[UNK]"}, {"id": 1, "content": "[MASK]"},
                    {"id": 2, "content": ""}]"#;
    let median = |added: &str| {
        WordPiece::from_json(bert_json(vocab, added).as_bytes())
            .unwrap()
            .median_token_chars()
    };
    assert_eq!(median("[]"), 2);
    assert_eq!(median(added), (2 + 5) / 2);
}

#[test]
fn rejects_other_pipelines() {
    let json =
        r#"{"model": {"type": "Unigram", "vocab": []}, "normalizer": null, "pre_tokenizer": null}"#;
    let err = WordPiece::from_json(json.as_bytes()).unwrap_err();
    assert!(
        err.contains("unsupported tokenizer (model Unigram"),
        "{err}"
    );
}
