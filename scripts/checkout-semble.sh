#!/usr/bin/env bash
# Materialises the Semble benchmark repositories from local bare mirrors.
#
#   scripts/checkout-semble.sh MIRRORS_DIR OUT_DIR [EVAL_DIR]
#
# MIRRORS_DIR holds one bare git directory per repository at <owner>+<name>/repo
# (what the session's fetch tool produces). Each repository is archived at its
# pinned revision when the mirror has it, else at its newest commit, into
# OUT_DIR/<name>/; OUT_DIR/checkouts.tsv records which. Nothing is written
# into this repository.
set -euo pipefail
mirrors=$1
out=$2
eval_dir=${3:-$(cd "$(dirname "$0")/../.." && pwd)/shared/eval}
mkdir -p "$out"
printf 'name\trevision\tpinned\n' > "$out/checkouts.tsv"
python3 - "$eval_dir/semble/repos.json" <<'PY' |
import json, sys
for r in json.load(open(sys.argv[1])):
    slug = r["url"].split("github.com/")[1].removesuffix(".git")
    print(r["name"], slug.replace("/", "+"), r["revision"], r.get("benchmark_root") or ".")
PY
while read -r name mirror rev root; do
  git_dir="$mirrors/$mirror/repo"
  if [ ! -d "$git_dir" ]; then
    printf '%s\t-\tmissing\n' "$name" >> "$out/checkouts.tsv"
    continue
  fi
  if git --git-dir="$git_dir" cat-file -e "$rev^{commit}" 2>/dev/null; then
    use=$rev pinned=yes
  else
    use=$(git --git-dir="$git_dir" rev-parse HEAD) pinned=no
  fi
  if [ ! -d "$out/$name" ]; then
    mkdir -p "$out/$name"
    # Only the benchmark root; mirrors lack files of 4 MiB and more, so a failed
    # archive falls back to extracting file by file, skipping what is absent.
    if ! git --git-dir="$git_dir" archive "$use" -- "$root" 2>/dev/null | tar -x -C "$out/$name" 2>/dev/null; then
      git --git-dir="$git_dir" ls-tree -r --format='%(objectname) %(path)' "$use" -- "$root" |
        while read -r obj path; do
          mkdir -p "$out/$name/$(dirname "$path")"
          git --git-dir="$git_dir" cat-file blob "$obj" > "$out/$name/$path" 2>/dev/null || rm -f "$out/$name/$path"
        done
    fi
  fi
  printf '%s\t%s\t%s\n' "$name" "$use" "$pinned" >> "$out/checkouts.tsv"
done
column -t "$out/checkouts.tsv" | awk '{print}' | tail -n +2 | awk '{c[$3]++} END {for (k in c) print k, c[k]}'
