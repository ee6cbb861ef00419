#!/usr/bin/env bash
# Speed benchmarks of the lode binary on one repository, side by side with ripgrep.
#
#   scripts/bench.sh REPO_DIR [EDIT_FILE]
#
# Works on a copy of REPO_DIR (the one-file edit must not touch the original) and a
# temporary cache. Needs hyperfine and ripgrep (apt-get install hyperfine ripgrep).
# LODE=path/to/lode overrides the binary (default target/release/lode).
set -euo pipefail
repo=$(cd "$1" && pwd)
lode=$(realpath "${LODE:-target/release/lode}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$repo" "$tmp/repo"
cache="$tmp/cache"
root="$tmp/repo"
edit=${2:-$(cd "$root" && find . -type f \( -name '*.go' -o -name '*.rs' -o -name '*.py' -o -name '*.ts' \) -print -quit)}
q="error handling when the request fails"
common=(--root "$root" --cache-dir "$cache")

echo "## machine: $(nproc) cores, $(grep MemTotal /proc/meminfo | awk '{print int($2/1048576)" GiB"}'); lode $(git -C "$(dirname "$lode")/../.." rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "## repository: $repo ($(find "$root" -type f | wc -l) files)"

echo "### full index (fresh cache each run)"
hyperfine --style basic --runs 3 --prepare "rm -rf '$cache'" "'$lode' index '$root' --cache-dir '$cache'"
"$lode" index "$root" --cache-dir "$cache" >/dev/null
/usr/bin/env time -f "peak RSS of a full index: %M KiB" "$lode" index "$root" --cache-dir "$tmp/cache-rss" >/dev/null 2>"$tmp/rss" || true
tail -1 "$tmp/rss"

echo "### cold query: new process, index on disk"
hyperfine --style basic --warmup 3 --runs 30 \
  -n "lode search --no-refresh" "'$lode' search '$q' ${common[*]} --no-refresh" \
  -n "lode search (with stat pass)" "'$lode' search '$q' ${common[*]}" \
  -n "rg -i 'request fails'" "rg -n -i 'request fails' '$root'"

echo "### regex: lode grep (grouped by symbol) vs ripgrep"
hyperfine --style basic --warmup 2 --runs 10 \
  -n "lode grep" "'$lode' grep 'func \(\w+ \*\w+\) \w+' ${common[*]} --no-refresh --max-lines 100000" \
  -n "rg" "rg -n 'func \(\w+ \*\w+\) \w+' '$root'"

echo "### re-index after a one-file edit ($edit)"
hyperfine --style basic --warmup 1 --runs 10 \
  --prepare "echo '// bench edit '\$(date +%N) >> '$root/$edit'" \
  "'$lode' index '$root' --cache-dir '$cache'"
