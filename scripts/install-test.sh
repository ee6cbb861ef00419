#!/usr/bin/env bash
# The install paths, end to end, from local artifacts: the binary packaged as a wheel and
# as an npm package (scripts/package.py), each installed into a fresh prefix, then
# `lode --version` and MCP checks through the installed entry point.
#
# Usage: scripts/install-test.sh BINARY PYTHON
#   BINARY  the lode binary to package (a debug build works: the packaging is what is tested)
#   PYTHON  a Python with the `mcp` package (the MCP client of crates/lode-cli/tests/python)
# Needs python3 (venv, pip) and npm; no network: nothing is fetched.
set -euo pipefail
cd "$(dirname "$0")/.."
binary="$(realpath "$1")"
python="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

want="$("$binary" --version)"
checks=(lists_the_tools_with_a_small_schema search_finds_a_symbol)

# An installed entry point answers as the binary does, and over MCP.
check() {
  local what="$1" lode="$2"
  local got
  got="$("$lode" --version)"
  if [[ "$got" != "$want" ]]; then
    echo "$what: \`lode --version\` says '$got', not '$want'" >&2
    exit 1
  fi
  timeout --kill-after=10 300 "$python" crates/lode-cli/tests/python/mcp_client.py "$lode" "${checks[@]}"
  echo "ok   $what: $lode"
}

python3 scripts/package.py "$binary" "$work/dist" >/dev/null
wheel="$(ls "$work"/dist/*.whl)"
echo "wheel: $(basename "$wheel"), $(du -k "$wheel" | cut -f1) KiB"

echo "== pip install the wheel into a fresh venv"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel"
check "pip" "$work/venv/bin/lode"

echo "== npm pack, then npm install -g into a fresh prefix"
(cd "$work/dist" && npm pack --silent ./npm >/dev/null)
tarball="$(ls "$work"/dist/lode-mcp-*.tgz)"
echo "npm package: $(basename "$tarball"), $(du -k "$tarball" | cut -f1) KiB"
npm install --global --silent --offline --no-audit --no-fund --prefix "$work/npm" "$tarball"
check "npm" "$work/npm/bin/lode"

echo "== npx from the tarball"
got="$(cd "$work" && npm exec --offline --yes --package "$tarball" -- lode --version)"
if [[ "$got" != "$want" ]]; then
  echo "npx: \`lode --version\` says '$got', not '$want'" >&2
  exit 1
fi
echo "ok   npx: $got"
