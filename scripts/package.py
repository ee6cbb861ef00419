#!/usr/bin/env python3
"""Packages a built `lode` binary for PyPI (a wheel) and npm (a package directory).

Usage: python3 scripts/package.py BINARY OUT_DIR [--plat TAG] [--no-strip]

Writes, from the binary cargo built (nothing is compiled here; a copy is
stripped of its debug info with `strip` unless --no-strip):

- `OUT_DIR/lode_mcp-VERSION-py3-none-TAG.whl`: the layout of maturin's `bin`
  bindings, the binary as `lode_mcp-VERSION.data/scripts/lode`, so that
  `pip install`, `pipx install` and `uvx --from lode-mcp lode mcp` put `lode` on
  the PATH. TAG defaults to `manylinux_2_N_<arch>`, N the newest glibc symbol
  version the binary needs (read from its bytes), else `linux_<arch>`.
- `OUT_DIR/npm/`: the npm package `lode-mcp` with the binary as its `lode`
  command (`npm pack OUT_DIR/npm`, then `npm i -g` or `npx -p lode-mcp lode mcp`).

The version is the workspace's (Cargo.toml). Prints the two paths.
"""

import argparse
import base64
import hashlib
import json
import platform
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "lode-mcp"
SUMMARY = "lode: code search, task retrieval and a repository map for AI coding agents, over MCP"


def workspace_version() -> str:
    text = (ROOT / "Cargo.toml").read_text()
    section = text.split("[workspace.package]", 1)[1]
    match = re.search(r'^version\s*=\s*"([^"]+)"', section, re.M)
    if not match:
        sys.exit("package.py: no version in [workspace.package] of Cargo.toml")
    return match.group(1)


def default_plat(binary: Path) -> str:
    machine = platform.machine().lower()
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    # The dynamic section names each glibc symbol version the binary needs.
    minors = [int(m) for m in re.findall(rb"GLIBC_2\.(\d+)", binary.read_bytes())]
    return f"manylinux_2_{max(minors)}_{arch}" if minors else f"linux_{arch}"


def stripped(binary: Path, work: Path) -> Path:
    """A copy of `binary` without debug info, or `binary` itself when `strip` is missing."""
    if shutil.which("strip") is None:
        print("package.py: no `strip`: packaging the binary as it is", file=sys.stderr)
        return binary
    copy = work / "lode"
    shutil.copyfile(binary, copy)
    subprocess.run(["strip", str(copy)], check=True)
    return copy


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(binary: Path, out: Path, version: str, plat: str) -> Path:
    dist = NAME.replace("-", "_")
    tag = f"py3-none-{plat}"
    info = f"{dist}-{version}.dist-info"
    readme = (ROOT / "README.md").read_text()
    metadata = (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\n"
        f"Version: {version}\n"
        f"Summary: {SUMMARY}\n"
        "License: MIT OR Apache-2.0\n"
        "Requires-Python: >=3.8\n"
        "Description-Content-Type: text/markdown\n\n"
        f"{readme}"
    )
    wheel = f"Wheel-Version: 1.0\nGenerator: lode package.py\nRoot-Is-Purelib: false\nTag: {tag}\n"
    files = [
        (f"{dist}-{version}.data/scripts/lode", binary.read_bytes(), 0o755),
        (f"{info}/METADATA", metadata.encode(), 0o644),
        (f"{info}/WHEEL", wheel.encode(), 0o644),
    ]
    path = out / f"{dist}-{version}-{tag}.whl"
    records = [record_line(name, data) for name, data, _ in files]
    records.append(f"{info}/RECORD,,")
    files.append((f"{info}/RECORD", ("\n".join(records) + "\n").encode(), 0o644))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in files:
            entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            entry.external_attr = (stat.S_IFREG | mode) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
    return path


def write_npm(binary: Path, out: Path, version: str) -> Path:
    pkg = out / "npm"
    if pkg.exists():
        shutil.rmtree(pkg)
    (pkg / "bin").mkdir(parents=True)
    target = pkg / "bin" / "lode"
    shutil.copyfile(binary, target)
    target.chmod(0o755)
    shutil.copyfile(ROOT / "README.md", pkg / "README.md")
    machine = platform.machine().lower()
    cpu = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64"}.get(machine, machine)
    manifest = {
        "name": NAME,
        "version": version,
        "description": SUMMARY,
        "license": "MIT OR Apache-2.0",
        "bin": {"lode": "bin/lode"},
        "files": ["bin/lode", "README.md"],
        "os": ["linux"],
        "cpu": [cpu],
    }
    (pkg / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return pkg


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("binary", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--plat", help="the wheel's platform tag")
    parser.add_argument("--no-strip", action="store_true", help="keep the debug info")
    args = parser.parse_args()
    if not args.binary.is_file():
        sys.exit(f"package.py: {args.binary}: no such file")
    args.out.mkdir(parents=True, exist_ok=True)
    version = workspace_version()
    plat = args.plat or default_plat(args.binary)
    with tempfile.TemporaryDirectory() as work:
        binary = args.binary if args.no_strip else stripped(args.binary, Path(work))
        print(write_wheel(binary, args.out, version, plat))
        print(write_npm(binary, args.out, version))


if __name__ == "__main__":
    main()
