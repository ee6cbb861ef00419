#!/usr/bin/env bash
# Regenerate crates/lode-embed/tests/fixtures/reference.json: embeddings of fixed strings
# computed by Python model2vec 0.10.0 (the reference implementation) with the built-in
# model in crates/lode-embed/model/. The Rust test `reference` checks lode's embeddings
# against it; CI needs no Python because the JSON is committed.
#
# Uses the same venv as scripts/build-default-model.sh (created if missing).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
model_dir="$repo_root/crates/lode-embed/model"
out="$repo_root/crates/lode-embed/tests/fixtures/reference.json"
venv="${LODE_M2V_VENV:-/tmp/lode-m2v-venv}"

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
if [[ ! -x "$venv/bin/python" ]]; then
  "${PYTHON:-python3}" -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import importlib.metadata as m; assert m.version("model2vec") == "0.10.0"' 2>/dev/null; then
  "$venv/bin/pip" install --quiet "model2vec==0.10.0"
fi

mkdir -p "$(dirname "$out")"
"$venv/bin/python" - "$model_dir" "$out" <<'PY'
import hashlib, importlib.metadata as md, json, sys

import numpy as np
from model2vec import StaticModel

model_dir, out = sys.argv[1], sys.argv[2]
model = StaticModel.from_pretrained(model_dir)

long_varied = " ".join(f"token{i} value_{i * 7 % 13}" for i in range(700))
texts = [
    "",
    "   \t\n  ",
    "def parse_config(path): return toml.load(open(path))",
    "fn main() {\n    println!(\"Hello, world!\");\n}",
    "pub struct RerankConfig { pub endpoint: Option<String>, pub timeout_ms: u64 }",
    "async function fetchJson(url) { const r = await fetch(url); return r.json(); }",
    "SELECT id, name FROM users WHERE active = 1 ORDER BY name DESC;",
    "#include <stdio.h>\nint main(void) { return printf(\"%d\\n\", 42) < 0; }",
    "How do I retry a failed HTTP request with exponential backoff?",
    "The quick brown fox jumps over the lazy dog.",
    "getUserByIdAsync fetch_user_by_id XMLHttpRequest __init__ kebab-case-name",
    "Café naïve résumé — Über Straße, Ångström",
    "日本語のテキストと中文字符 mixed with English",
    "Привет, мир! Γειά σου Κόσμε",
    "emoji 🦀 rust 🚀 launch ✨",
    "control\u0000chars\u0007and\u200bzero\u00a0width",
    "literal [UNK] and [PAD] and [CLS] tokens",
    "supercalifragilisticexpialidocious " + "x" * 150,
    "a" * 30,
    long_varied,
    "İstanbul ǅemal ﬁnance ℌilbert",
]
emb = model.encode(texts)
# encode() first cuts each text to max_length * median token length characters.
cut = model.max_length * model.median_token_length
ids = model.tokenize([t[:cut] for t in texts])
sha = hashlib.sha256(open(f"{model_dir}/model.safetensors", "rb").read()).hexdigest()
doc = {
    "about": "Python model2vec reference embeddings of the built-in model; regenerate with scripts/gen-embed-fixture.sh",
    "model2vec": md.version("model2vec"),
    "tokenizers": md.version("tokenizers"),
    "numpy": md.version("numpy"),
    "model_safetensors_sha256": sha,
    "dim": int(emb.shape[1]),
    "max_length": model.max_length,
    "median_token_length": model.median_token_length,
    "cases": [
        {
            "text": t,
            # the token ids encode() pools: character cut, tokenizer truncation at
            # max_length, unknown tokens removed.
            "ids": [int(i) for i in tok],
            "embedding": [float(f"{x:.8g}") for x in np.asarray(e, dtype=np.float32)],
        }
        for t, tok, e in zip(texts, ids, emb)
    ],
}
with open(out, "w", encoding="utf-8") as f:
    json.dump(doc, f, ensure_ascii=False, indent=None, separators=(",", ":"))
    f.write("\n")
print(f"wrote {out}: {len(texts)} cases, dim {emb.shape[1]}")
PY
