//! An ids-only WordPiece tokenizer for the BERT pipeline of `tokenizer.json`
//! (`BertNormalizer` + `BertPreTokenizer` + `WordPiece`), reproducing what the
//! Hugging Face `tokenizers` library (and so Python model2vec) produces for
//! `encode(text, add_special_tokens=False).ids`:
//!
//! 1. added tokens with `normalized: false` (e.g. `[PAD]`, `[UNK]`) are matched
//!    leftmost-longest in the raw text and become their id;
//! 2. the rest is normalized: control characters dropped, whitespace turned into
//!    spaces, CJK ideographs padded with spaces, NFD with non-spacing marks removed,
//!    lowercased (each step as the config says);
//! 3. split on whitespace, each punctuation character its own word;
//! 4. each word is split greedily longest-match-first into vocabulary pieces
//!    (`##` for continuations); a word that cannot be split, or is longer than
//!    `max_input_chars_per_word` characters, becomes the unknown token.
//!
//! Character classes use the same tables as `tokenizers` (`unicode_categories`),
//! so the ids match byte for byte; the fixture test checks it against Python.

use serde::Deserialize;
use unicode_categories::UnicodeCategories;
use unicode_normalization::UnicodeNormalization;

/// A byte trie over vocabulary pieces, for longest-prefix lookups without hashing:
/// node `n`'s children are `edge_bytes/edge_child[nodes[n].0..nodes[n + 1].0]`, sorted.
#[derive(Debug, Clone, PartialEq)]
struct Trie {
    /// Per node: (index of its first edge, piece id or `NO_ID`); one extra entry at
    /// the end closes the last node's edge range.
    nodes: Vec<(u32, u32)>,
    edge_bytes: Vec<u8>,
    edge_child: Vec<u32>,
    /// The root's child for each first byte (0: none; the root is never a child).
    root: Box<[u32; 256]>,
}

const NO_ID: u32 = u32::MAX;

impl Trie {
    /// Builds the trie of `keys`, which must be sorted and free of duplicates.
    fn build(keys: &[(&[u8], u32)]) -> Trie {
        let mut t = Trie {
            nodes: Vec::new(),
            edge_bytes: Vec::new(),
            edge_child: Vec::new(),
            root: Box::new([0; 256]),
        };
        // Breadth first, so that the children of every node are contiguous.
        let mut queue = std::collections::VecDeque::from([(0usize, keys.len(), 0usize)]);
        let mut ids = vec![NO_ID];
        while let Some((mut lo, hi, depth)) = queue.pop_front() {
            let node = t.nodes.len();
            if lo < hi && keys[lo].0.len() == depth {
                ids[node] = keys[lo].1;
                lo += 1;
            }
            t.nodes.push((t.edge_bytes.len() as u32, ids[node]));
            while lo < hi {
                let byte = keys[lo].0[depth];
                let end = lo + keys[lo..hi].partition_point(|k| k.0[depth] == byte);
                let child = ids.len() as u32;
                if node == 0 {
                    t.root[byte as usize] = child;
                }
                t.edge_bytes.push(byte);
                t.edge_child.push(child);
                ids.push(NO_ID);
                queue.push_back((lo, end, depth + 1));
                lo = end;
            }
        }
        t.nodes.push((t.edge_bytes.len() as u32, NO_ID));
        t
    }

    /// The longest key that is a prefix of `s`: its length in bytes and its id.
    #[inline]
    fn longest_prefix(&self, s: &[u8]) -> Option<(usize, u32)> {
        let (&first, rest) = s.split_first()?;
        let mut node = self.root[first as usize] as usize;
        if node == 0 {
            return None;
        }
        let mut best = None;
        let mut i = 1;
        loop {
            let (lo, id) = self.nodes[node];
            if id != NO_ID {
                best = Some((i, id));
            }
            let Some(&b) = rest.get(i - 1) else {
                return best;
            };
            let (lo, hi) = (lo as usize, self.nodes[node + 1].0 as usize);
            let edges = &self.edge_bytes[lo..hi];
            let k = if edges.len() <= 8 {
                edges.iter().position(|&e| e == b)
            } else {
                edges.binary_search(&b).ok()
            };
            match k {
                Some(k) => node = self.edge_child[lo + k] as usize,
                None => return best,
            }
            i += 1;
        }
    }
}

/// A flat little-endian image of a [`WordPiece`], so that the built-in
/// tokenizer is prepared when lode is compiled (`build.rs`) and only copied
/// when a process loads it: parsing the JSON, sorting the vocabulary and
/// building the tries was most of the built-in model's load time.
mod image {
    use super::{Trie, WordPiece};

    const MAGIC: &[u8; 8] = b"lodewp01";

    #[derive(Default)]
    struct Writer(Vec<u8>);

    impl Writer {
        fn u32(&mut self, v: u32) {
            self.0.extend_from_slice(&v.to_le_bytes());
        }
        fn len(&mut self, n: usize) {
            self.u32(u32::try_from(n).expect("tokenizer tables fit in u32"));
        }
        fn bytes(&mut self, b: &[u8]) {
            self.len(b.len());
            self.0.extend_from_slice(b);
        }
        fn u32s(&mut self, v: impl ExactSizeIterator<Item = u32>) {
            self.len(v.len());
            v.for_each(|x| self.u32(x));
        }
        fn trie(&mut self, t: &Trie) {
            self.u32s(
                t.nodes
                    .iter()
                    .flat_map(|&(a, b)| [a, b])
                    .collect::<Vec<_>>()
                    .into_iter(),
            );
            self.bytes(&t.edge_bytes);
            self.u32s(t.edge_child.iter().copied());
            self.u32s(t.root.iter().copied());
        }
    }

    struct Reader<'a>(&'a [u8]);

    impl Reader<'_> {
        fn take(&mut self, n: usize) -> Option<&[u8]> {
            let (head, rest) = self.0.split_at_checked(n)?;
            self.0 = rest;
            Some(head)
        }
        fn u32(&mut self) -> Option<u32> {
            Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
        }
        fn bytes(&mut self) -> Option<Vec<u8>> {
            let n = self.u32()? as usize;
            Some(self.take(n)?.to_vec())
        }
        fn u32s(&mut self) -> Option<Vec<u32>> {
            let n = self.u32()? as usize;
            let raw = self.take(n.checked_mul(4)?)?;
            Some(
                raw.chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            )
        }
        fn trie(&mut self) -> Option<Trie> {
            let flat = self.u32s()?;
            let nodes = flat.chunks_exact(2).map(|p| (p[0], p[1])).collect();
            let edge_bytes = self.bytes()?;
            let edge_child = self.u32s()?;
            let root: Box<[u32; 256]> = self.u32s()?.into_boxed_slice().try_into().ok()?;
            Some(Trie {
                nodes,
                edge_bytes,
                edge_child,
                root,
            })
        }
    }

    impl WordPiece {
        /// The image [`WordPiece::from_image`] reads back.
        #[allow(dead_code)] // used by build.rs, which includes this file
        pub(crate) fn to_image(&self) -> Vec<u8> {
            let mut w = Writer::default();
            w.0.extend_from_slice(MAGIC);
            w.trie(&self.words);
            w.trie(&self.continuations);
            for v in [
                self.unk_id,
                self.max_input_chars_per_word as u32,
                u32::from(self.clean_text),
                u32::from(self.handle_chinese_chars),
                u32::from(self.strip_accents),
                u32::from(self.lowercase),
                self.vocab_size as u32,
                self.median_token_chars as u32,
            ] {
                w.u32(v);
            }
            w.len(self.added.len());
            for (content, id) in &self.added {
                w.bytes(content.as_bytes());
                w.u32(*id);
            }
            w.0
        }

        /// A tokenizer from its image; `None` when `image` is not one.
        #[allow(dead_code)] // not used by build.rs
        pub(crate) fn from_image(image: &[u8]) -> Option<WordPiece> {
            let mut r = Reader(image);
            if r.take(MAGIC.len())? != MAGIC {
                return None;
            }
            let words = r.trie()?;
            let continuations = r.trie()?;
            let mut v = [0u32; 8];
            for x in &mut v {
                *x = r.u32()?;
            }
            let mut added = Vec::new();
            let mut added_first_bytes = [false; 256];
            for _ in 0..r.u32()? {
                let content = String::from_utf8(r.bytes()?).ok()?;
                added_first_bytes[*content.as_bytes().first()? as usize] = true;
                added.push((content.into_boxed_str(), r.u32()?));
            }
            r.0.is_empty().then_some(WordPiece {
                words,
                continuations,
                unk_id: v[0],
                max_input_chars_per_word: v[1] as usize,
                clean_text: v[2] != 0,
                handle_chinese_chars: v[3] != 0,
                strip_accents: v[4] != 0,
                lowercase: v[5] != 0,
                added,
                added_first_bytes,
                vocab_size: v[6] as usize,
                median_token_chars: v[7] as usize,
            })
        }
    }
}

/// `model.vocab` of a WordPiece tokenizer.json, read straight into a list; `None`
/// when it is not a map (e.g. a Unigram model's list), so the pipeline check can
/// name the model type instead of failing on the vocabulary's shape.
struct Vocab(Option<Vec<(String, u32)>>);

impl<'de> Deserialize<'de> for Vocab {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Vocab;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a vocabulary")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Vocab, A::Error> {
                let mut v = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some(entry) = map.next_entry::<String, u32>()? {
                    v.push(entry);
                }
                Ok(Vocab(Some(v)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Vocab, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Vocab(None))
            }
            fn visit_unit<E>(self) -> Result<Vocab, E> {
                Ok(Vocab(None))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
struct TokenizerJson {
    #[serde(default)]
    added_tokens: Vec<AddedTokenJson>,
    normalizer: Option<NormalizerJson>,
    pre_tokenizer: Option<TypeOnly>,
    model: ModelJson,
}

impl TokenizerJson {
    /// Checks that this is the one pipeline lode implements: a WordPiece model
    /// behind BertNormalizer and BertPreTokenizer.
    fn check_pipeline(&self) -> Result<(), String> {
        let kind = self.model.kind.as_deref().unwrap_or("?");
        let normalizer = self.normalizer.as_ref().map_or("none", |n| n.kind.as_str());
        let pre = self
            .pre_tokenizer
            .as_ref()
            .map_or("none", |p| p.kind.as_str());
        if kind != "WordPiece" || normalizer != "BertNormalizer" || pre != "BertPreTokenizer" {
            return Err(format!(
                "unsupported tokenizer (model {kind}, normalizer {normalizer}, pre-tokenizer {pre}); \
                 lode reads WordPiece with BertNormalizer and BertPreTokenizer"
            ));
        }
        Ok(())
    }
}

#[derive(Deserialize)]
struct TypeOnly {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct AddedTokenJson {
    id: u32,
    content: String,
    #[serde(default)]
    single_word: bool,
    #[serde(default)]
    normalized: bool,
}

#[derive(Deserialize)]
struct NormalizerJson {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default = "yes")]
    clean_text: bool,
    #[serde(default = "yes")]
    handle_chinese_chars: bool,
    #[serde(default)]
    strip_accents: Option<bool>,
    #[serde(default = "yes")]
    lowercase: bool,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
struct ModelJson {
    #[serde(rename = "type")]
    kind: Option<String>,
    unk_token: Option<String>,
    continuing_subword_prefix: Option<String>,
    max_input_chars_per_word: Option<usize>,
    vocab: Option<Vocab>,
}

/// The BERT WordPiece pipeline, ids only.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WordPiece {
    /// Whole vocabulary: pieces that start a word.
    words: Trie,
    /// Pieces that continue a word, without the continuation prefix.
    continuations: Trie,
    unk_id: u32,
    max_input_chars_per_word: usize,
    clean_text: bool,
    handle_chinese_chars: bool,
    strip_accents: bool,
    lowercase: bool,
    /// Added tokens matched in the raw text, longest first.
    added: Vec<(Box<str>, u32)>,
    added_first_bytes: [bool; 256],
    vocab_size: usize,
    median_token_chars: usize,
}

/// Per-thread buffers, reused so that tokenizing allocates nothing once warm.
#[derive(Default)]
pub(crate) struct Scratch {
    a: String,
    b: String,
}

impl WordPiece {
    /// Reads a `tokenizer.json`. The error is a short reason; the caller names the file.
    pub(crate) fn from_json(bytes: &[u8]) -> Result<Self, String> {
        let json: TokenizerJson =
            serde_json::from_slice(bytes).map_err(|e| format!("not a tokenizer.json: {e}"))?;
        json.check_pipeline()?;
        let norm = json.normalizer.expect("checked above");
        let model = json.model;
        let vocab = model
            .vocab
            .and_then(|v| v.0)
            .ok_or("tokenizer.json has no model.vocab map")?;
        let unk = model.unk_token.as_deref().unwrap_or("[UNK]");
        let unk_id = token_id(&vocab, unk)
            .ok_or_else(|| format!("unknown token {unk:?} is not in the vocabulary"))?;
        let prefix = model.continuing_subword_prefix.as_deref().unwrap_or("##");

        let arena = sorted_arena(&vocab);
        let vocab = arena_vocab(&arena);
        check_vocab(&vocab)?;
        let (words, continuations) = build_tries(&vocab, prefix);
        let added = added_tokens(json.added_tokens, vocab.len())?;
        let added_first_bytes = first_bytes(&added);
        let median_token_chars = median_token_chars(&vocab, &added);

        Ok(WordPiece {
            words,
            continuations,
            unk_id,
            max_input_chars_per_word: model.max_input_chars_per_word.unwrap_or(100),
            clean_text: norm.clean_text,
            handle_chinese_chars: norm.handle_chinese_chars,
            strip_accents: norm.strip_accents.unwrap_or(norm.lowercase),
            lowercase: norm.lowercase,
            added,
            added_first_bytes,
            vocab_size: vocab.len(),
            median_token_chars,
        })
    }

    pub(crate) fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    pub(crate) fn unk_id(&self) -> u32 {
        self.unk_id
    }

    /// `int(np.median(len(token) for token in vocab))`, as Python model2vec computes it.
    pub(crate) fn median_token_chars(&self) -> usize {
        self.median_token_chars
    }

    /// Appends the ids of `text` to `ids`, stopping once `ids` holds `limit` ids
    /// (truncation keeps the first tokens, so stopping early gives the same result).
    pub(crate) fn encode(
        &self,
        text: &str,
        limit: usize,
        scratch: &mut Scratch,
        ids: &mut Vec<u32>,
    ) {
        let bytes = text.as_bytes();
        let mut seg_start = 0;
        let mut i = 0;
        if !self.added.is_empty() {
            while i < bytes.len() {
                if self.added_first_bytes[bytes[i] as usize]
                    && let Some((content, id)) = self
                        .added
                        .iter()
                        .find(|(c, _)| bytes[i..].starts_with(c.as_bytes()))
                {
                    self.encode_segment(&text[seg_start..i], limit, scratch, ids);
                    if ids.len() >= limit {
                        return;
                    }
                    ids.push(*id);
                    i += content.len();
                    seg_start = i;
                    continue;
                }
                i += 1;
            }
        }
        self.encode_segment(&text[seg_start..], limit, scratch, ids);
    }

    fn encode_segment(
        &self,
        segment: &str,
        limit: usize,
        scratch: &mut Scratch,
        ids: &mut Vec<u32>,
    ) {
        if segment.is_empty() || ids.len() >= limit {
            return;
        }
        let Scratch { a, b } = scratch;
        a.clear();
        if segment.is_ascii() {
            // ASCII needs no NFD, has no marks and no CJK: drop control bytes (tab, newline
            // and carriage return are whitespace, which splitting treats like a space)
            // and lowercase.
            let is_control = |b: u8| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) || b == 0x7f;
            if self.clean_text && segment.bytes().any(is_control) {
                a.extend(segment.bytes().filter(|&b| !is_control(b)).map(char::from));
            } else {
                a.push_str(segment);
            }
            if self.lowercase {
                a.make_ascii_lowercase();
            }
        } else {
            self.normalize(segment, a, b);
        }
        self.split_words(a, limit, ids);
    }

    /// The general (non-ASCII) normalizer; the result is left in `a`.
    fn normalize(&self, segment: &str, a: &mut String, b: &mut String) {
        for c in segment.chars() {
            if self.clean_text {
                if c == '\0' || c == '\u{fffd}' || is_control(c) {
                    continue;
                }
                if is_whitespace(c) {
                    a.push(' ');
                    continue;
                }
            }
            if self.handle_chinese_chars && is_chinese_char(c) {
                a.push(' ');
                a.push(c);
                a.push(' ');
            } else {
                a.push(c);
            }
        }
        if self.strip_accents {
            b.clear();
            b.extend(a.nfd().filter(|c| c.is_ascii() || !c.is_mark_nonspacing()));
            std::mem::swap(a, b);
        }
        if self.lowercase {
            b.clear();
            for c in a.chars() {
                if c.is_ascii() {
                    b.push(c.to_ascii_lowercase());
                } else {
                    b.extend(c.to_lowercase());
                }
            }
            std::mem::swap(a, b);
        }
    }

    /// BertPreTokenizer: split on whitespace, isolate punctuation; WordPiece each word.
    fn split_words(&self, text: &str, limit: usize, ids: &mut Vec<u32>) {
        let mut word_start = None;
        for (i, c) in text.char_indices() {
            if ids.len() >= limit {
                return;
            }
            if c.is_whitespace() {
                if let Some(s) = word_start.take() {
                    self.word_piece(&text[s..i], ids);
                }
            } else if is_bert_punctuation(c) {
                if let Some(s) = word_start.take() {
                    self.word_piece(&text[s..i], ids);
                }
                if ids.len() < limit {
                    self.word_piece(&text[i..i + c.len_utf8()], ids);
                }
            } else if word_start.is_none() {
                word_start = Some(i);
            }
        }
        if let Some(s) = word_start
            && ids.len() < limit
        {
            self.word_piece(&text[s..], ids);
        }
    }

    fn word_piece(&self, word: &str, ids: &mut Vec<u32>) {
        if word.len() > self.max_input_chars_per_word
            && word.chars().count() > self.max_input_chars_per_word
        {
            ids.push(self.unk_id);
            return;
        }
        let mark = ids.len();
        let bytes = word.as_bytes();
        let mut start = 0;
        while start < bytes.len() {
            let trie = if start == 0 {
                &self.words
            } else {
                &self.continuations
            };
            match trie.longest_prefix(&bytes[start..]) {
                Some((len, id)) => {
                    ids.push(id);
                    start += len;
                }
                None => {
                    ids.truncate(mark);
                    ids.push(self.unk_id);
                    return;
                }
            }
        }
    }
}

/// The vocabulary's bytes in one buffer, in sorted order, with (start, len, id)
/// per piece. The strings of a parsed JSON map lie scattered over the heap; sorting
/// and building the tries over one contiguous buffer stays in cache, which made
/// loading the built-in tokenizer several times faster.
fn sorted_arena(vocab: &[(String, u32)]) -> (Vec<u8>, Vec<(u32, u32, u32)>) {
    let total: usize = vocab.iter().map(|(t, _)| t.len()).sum();
    let mut raw = Vec::with_capacity(total);
    let mut spans = Vec::with_capacity(vocab.len());
    for (t, id) in vocab {
        spans.push((raw.len() as u32, t.len() as u32, *id));
        raw.extend_from_slice(t.as_bytes());
    }
    let key = |s: &(u32, u32, u32)| &raw[s.0 as usize..(s.0 + s.1) as usize];
    spans.sort_unstable_by(|a, b| key(a).cmp(key(b)));
    let mut sorted = Vec::with_capacity(total);
    let spans = spans
        .iter()
        .map(|s| {
            let start = sorted.len() as u32;
            sorted.extend_from_slice(key(s));
            (start, s.1, s.2)
        })
        .collect();
    (sorted, spans)
}

/// The id of `token` in a vocabulary as `tokenizer.json` lists it (unsorted).
fn token_id(vocab: &[(String, u32)], token: &str) -> Option<u32> {
    vocab.iter().find(|(t, _)| t == token).map(|&(_, id)| id)
}

/// The pieces of a [`sorted_arena`] as strings, in sorted order, with their ids.
fn arena_vocab((bytes, spans): &(Vec<u8>, Vec<(u32, u32, u32)>)) -> Vec<(&str, u32)> {
    spans
        .iter()
        .map(|&(start, len, id)| {
            let bytes = &bytes[start as usize..(start + len) as usize];
            // Slices at the boundaries of whole strings: valid UTF-8.
            (std::str::from_utf8(bytes).unwrap_or(""), id)
        })
        .collect()
}

/// Checks that a sorted vocabulary has each token once and the ids 0..n, each once,
/// so that ids can index the embedding rows.
fn check_vocab(vocab: &[(&str, u32)]) -> Result<(), String> {
    if vocab.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err("tokenizer vocabulary has a duplicate token".into());
    }
    let mut ids: Vec<u32> = vocab.iter().map(|&(_, id)| id).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.len() != vocab.len() || ids.last().is_some_and(|&m| m as usize >= vocab.len()) {
        return Err("tokenizer vocabulary ids are not 0..n without gaps".into());
    }
    Ok(())
}

/// The tries of a sorted vocabulary: every piece, and the pieces that continue a
/// word (those starting with `prefix`), stripped of it.
fn build_tries(vocab: &[(&str, u32)], prefix: &str) -> (Trie, Trie) {
    let word_keys: Vec<(&[u8], u32)> = vocab.iter().map(|(t, id)| (t.as_bytes(), *id)).collect();
    // Keys stay sorted after stripping a common prefix.
    let cont_keys: Vec<(&[u8], u32)> = vocab
        .iter()
        .filter_map(|(t, id)| Some((t.strip_prefix(prefix)?.as_bytes(), *id)))
        .filter(|(rest, _)| !rest.is_empty())
        .collect();
    (Trie::build(&word_keys), Trie::build(&cont_keys))
}

/// The added tokens to match in the raw text, longest first; empty ones are
/// dropped. Only exact matching (`normalized` and `single_word` false) is
/// implemented, so a token that asks for more is an error rather than a silent
/// difference from Python.
fn added_tokens(
    tokens: Vec<AddedTokenJson>,
    vocab_size: usize,
) -> Result<Vec<(Box<str>, u32)>, String> {
    let mut added = Vec::new();
    for t in tokens {
        if t.content.is_empty() {
            continue;
        }
        if t.normalized || t.single_word {
            return Err(format!(
                "added token {:?} uses normalized/single_word matching, which lode does not implement",
                t.content
            ));
        }
        if t.id as usize >= vocab_size {
            return Err(format!(
                "added token {:?} has id {} outside the vocabulary",
                t.content, t.id
            ));
        }
        added.push((t.content.into_boxed_str(), t.id));
    }
    added.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.1.cmp(&b.1)));
    Ok(added)
}

/// The bytes an added token can start with, so that encoding looks for added
/// tokens only at those.
fn first_bytes(added: &[(Box<str>, u32)]) -> [bool; 256] {
    let mut first = [false; 256];
    for (content, _) in added {
        // `added_tokens` drops empty tokens.
        first[content.as_bytes()[0] as usize] = true;
    }
    first
}

/// The median length in characters of the tokens of a sorted vocabulary and of
/// the added tokens outside it: the tokens Python model2vec counts.
fn median_token_chars(vocab: &[(&str, u32)], added: &[(Box<str>, u32)]) -> usize {
    let outside = added
        .iter()
        .map(|(t, _)| &**t)
        .filter(|t| vocab.binary_search_by(|(v, _)| (*v).cmp(t)).is_err());
    let mut lens: Vec<usize> = vocab
        .iter()
        .map(|&(t, _)| t)
        .chain(outside)
        .map(|t| t.chars().count())
        .collect();
    median(&mut lens)
}

fn median(lens: &mut [usize]) -> usize {
    if lens.is_empty() {
        return 1;
    }
    lens.sort_unstable();
    let n = lens.len();
    if n % 2 == 1 {
        lens[n / 2]
    } else {
        (lens[n / 2 - 1] + lens[n / 2]) / 2
    }
}

fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

fn is_control(c: char) -> bool {
    if c.is_ascii() {
        // The ASCII members of Cc/Cf/Co: C0 controls and DEL.
        return c.is_ascii_control() && !matches!(c, '\t' | '\n' | '\r');
    }
    c.is_other()
}

fn is_chinese_char(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

fn is_bert_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || (!c.is_ascii() && c.is_punctuation())
}

// A path of its own: build.rs includes this file from another directory.
#[cfg(test)]
#[path = "tokenizer/tests.rs"]
mod tests;
