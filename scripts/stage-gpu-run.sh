#!/usr/bin/env bash
# Builds the release binaries and test binaries here and copies them into
# .device/ (ignored by git), for a GPU machine that has no Rust toolchain:
# the default build, and the `barrier-timeout` build (host-barrier-timeout and
# the barrier_timeout test).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .device && mkdir -p .device/tests

copy_tests() {  # cargo test --no-run arguments...; copies each test binary
  cargo test --release --no-run --message-format=json "$@" 2>/dev/null | python3 -c '
import json, sys, shutil
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        kind = m["target"]["kind"]
        name = m["target"]["name"] + ("" if kind == ["test"] else "-unit")
        shutil.copy(m["executable"], ".device/tests/" + name)
'
}

cargo build --release -p host
cp target/release/host .device/host
copy_tests --workspace
cargo build --release -p host --features barrier-timeout
cp target/release/host .device/host-barrier-timeout
rm -f .device/tests/barrier_timeout
copy_tests -p host --features barrier-timeout --test barrier_timeout
cp scripts/gpu-check.sh scripts/sanitize.sh .device/
ls -la .device .device/tests
