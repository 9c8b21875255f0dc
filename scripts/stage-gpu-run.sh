#!/usr/bin/env bash
# Builds the release binary and the test binaries here and copies them into
# .device/ (ignored by git), for a GPU machine that has no Rust toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .device && mkdir -p .device/tests
cargo build --release -p host
cp target/release/host .device/host
cargo test --release --workspace --no-run --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys, shutil
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        name = m["target"]["name"] + ("-unit" if m["target"]["kind"] != ["test"] else "")
        shutil.copy(m["executable"], ".device/tests/" + name)
'
cp scripts/gpu-check.sh .device/
ls -la .device .device/tests
