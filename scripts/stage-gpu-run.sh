#!/usr/bin/env bash
# Builds, here, everything a GPU machine without Rust needs, into .device/
# (ignored by git): the release binary, the test binaries, the diagnosing-
# barrier build, and the lesson built with each tile size (the learner's edit:
# the kernels' `<const TILE: u32 = 32>` changed, then a rebuild).
# Usage: scripts/stage-gpu-run.sh [--no-tiles]
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

# With the traced module (host/traced), which `trace` and its GPU test load.
cargo build --release -p host --features host/traced
cp target/release/cg-lesson .device/cg-lesson
copy_tests --workspace --features host/traced
cargo build --release -p host --features barrier-timeout
cp target/release/cg-lesson .device/cg-lesson-barrier-timeout
rm -f .device/tests/barrier_timeout .device/tests/barrier_timeout_watched .device/tests/barrier_timeout_shared .device/tests/branch_memory_mutant
copy_tests -p host --features barrier-timeout --test barrier_timeout --test barrier_timeout_watched
# The launcher's mutants exist only under --cfg cg_mutants (scripts/test.sh says how it is set).
copy_tests -Zprofile-rustflags --config 'profile.release.package.cg-launcher.rustflags=["--cfg","cg_mutants"]' --config 'profile.release.package.host.rustflags=["--cfg","cg_mutants"]' -p host --features barrier-timeout --test barrier_timeout_shared --test branch_memory_mutant

if [ "${1:-}" != "--no-tiles" ]; then
  # The learner's edit, in a copy: every lesson kernel's tile from 32 to $t.
  copy=$(mktemp -d)
  git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} cp --parents {} "$copy"
  for t in 1 2 4 8 16; do
    sed -i "s/<const TILE: u32 = 32>/<const TILE: u32 = $t>/" "$copy/gpu/src/lesson/lesson.rs"
    (cd "$copy" && CARGO_TARGET_DIR="$PWD/../tile-target" cargo build --release -q -p host)
    cp "$copy/../tile-target/release/cg-lesson" ".device/cg-lesson-tile$t"
    sed -i "s/<const TILE: u32 = $t>/<const TILE: u32 = 32>/" "$copy/gpu/src/lesson/lesson.rs"
  done
  rm -rf "$copy"
fi
# The toolkit's two programs: the grid-wide scan, and the program of
# docs/your-own-kernel.md, built from the chapter's own files in a folder
# outside this repository.
cargo build --release -p scan -p compact -p histogram -p algorithms -p bfs -p grid-costs
cp target/release/scan target/release/compact target/release/histogram target/release/algorithms target/release/bfs target/release/grid-costs .device/
walk=$(mktemp -d)
ln -s "$PWD" "$walk/cg-lesson"
python3 - "$walk" docs/your-own-kernel.md <<'PY'
import os, sys
walk, doc = sys.argv[1], open(sys.argv[2]).read().split("```")
for block in doc[1::2]:
    info, _, body = block.partition("\n")
    path = next((w[5:] for w in info.split() if w.startswith("file=")), None)
    if path:
        os.makedirs(os.path.dirname(os.path.join(walk, path)) or walk, exist_ok=True)
        open(os.path.join(walk, path), "w").write(body)
PY
(cd "$walk/my-app" && CARGO_TARGET_DIR="$PWD/../target" cargo build --release -q)
cp "$walk/target/release/my-app" .device/my-app
rm -rf "$walk"

# The host's cost per call (host/examples/overhead.rs), and the same file
# built against the launcher before issue 55 (commit ab2ab53), if
# OVERHEAD_BEFORE names that build: gpu-check.sh runs them in turn (OVERHEAD=1).
cargo build --release -p host --example overhead
cp target/release/examples/overhead .device/overhead-after
if [ -n "${OVERHEAD_BEFORE:-}" ]; then cp "$OVERHEAD_BEFORE" .device/overhead-before; fi

cp scripts/gpu-check.sh scripts/multi-gpu-check.sh scripts/sanitize.sh .device/
ls -la .device .device/tests
