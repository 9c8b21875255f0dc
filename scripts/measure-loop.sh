#!/usr/bin/env bash
# The learner's loop, timed as a learner meets it: a fresh clone of this
# repository, PTXAS unset, then the real commands after real edits.
#   1. the first build (`cargo build --release -p host`), crates already downloaded;
#   2. a kernel edit (the lesson's tile, 32 to 16, in gpu/src/kernels/lesson.rs),
#      then the emulator's whole lesson (`cargo run --release -p host -- --emulate`);
#   3. the same edit back, then the GPU build (`cargo build --release -p host`);
#   4. a written solve() (ours, copied in), built once, then an edit to it
#      (blocks of 128 for 256), then the exercise on the emulator
#      (`cargo run --release -p host -- exercise --emulate`).
# Each edit-to-answer time includes the build the edit causes. Prints a
# table with the date and the machine, for the README to quote.
# Usage: scripts/measure-loop.sh [repetitions, default 3]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
reps=${1:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/clone"
cd "$work/clone"
unset PTXAS
export CARGO_TERM_QUIET=true

# Seconds `$@` takes, its output kept in $work/last.log; fails the script if it fails.
seconds() {
  local start end
  start=$(date +%s.%N)
  if ! "$@" >"$work/last.log" 2>&1; then
    cat "$work/last.log" >&2
    echo "error: '$*' failed in the loop measurement" >&2
    exit 1
  fi
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

# The range of what `$@` prints over the repetitions: "min-max s".
range() {
  sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (lo == hi) printf "%.1f s", lo; else printf "%.1f-%.1f s", lo, hi }'
}

cargo fetch -q
first=$(seconds cargo build --release -p host)

lesson=gpu/src/kernels/lesson.rs
kernel_edit=$(for _ in $(seq "$reps"); do
  sed -i 's/<const TILE: u32 = 32>/<const TILE: u32 = 16>/' "$lesson"
  seconds cargo run --release -p host -- --emulate
  grep -q "checks passed" "$work/last.log" || { echo "error: the edited lesson did not pass" >&2; exit 1; }
  sed -i 's/<const TILE: u32 = 16>/<const TILE: u32 = 32>/' "$lesson"
  cargo build --release -p host -q
done | range)

gpu_build=$(for _ in $(seq "$reps"); do
  sed -i 's/<const TILE: u32 = 32>/<const TILE: u32 = 16>/' "$lesson"
  seconds cargo build --release -p host
  sed -i 's/<const TILE: u32 = 16>/<const TILE: u32 = 32>/' "$lesson"
  cargo build --release -p host -q
done | range)

# A written solve(): ours, from variants.rs, in place of the unwritten one.
solve=host/src/exercise/solve.rs
python3 - "$solve" host/src/exercise/variants.rs <<'PY'
import re, sys
solve_path, variants_path = sys.argv[1], sys.argv[2]
variants = open(variants_path).read()
body = variants[variants.index("pub fn reference("):]
body = body[body.index("{") + 1:]
depth, end = 1, 0
for k, c in enumerate(body):
    depth += (c == "{") - (c == "}")
    if depth == 0:
        end = k
        break
body = body[:end].replace("THREADS_PER_BLOCK", "256")
s = open(solve_path).read()
s = re.sub(r"\{\n    // Delete this line and write your solve\(\) here\.\n    super::unwritten\(gpu, input, total\)\n\}", "{" + body + "}", s)
s = s.replace("use super::Solved;", "use super::Solved;\n")
open(solve_path, "w").write(s)
PY
grep -q "kernel.configure" "$solve" || { echo "error: could not write solve() into $solve" >&2; exit 1; }
cargo build --release -p host -q
solve_edit=$(for _ in $(seq "$reps"); do
  sed -i 's/\b256\b/128/g' "$solve"
  seconds cargo run --release -p host -- exercise --emulate
  grep -q "checks passed" "$work/last.log" || { cat "$work/last.log" >&2; echo "error: the written solve() did not pass" >&2; exit 1; }
  sed -i 's/\b128\b/256/g' "$solve"
  cargo build --release -p host -q
done | range)

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo "The learner's loop, $(date -u +'%Y-%m-%d %H:%M UTC'), $(nproc) cores ($cpu), $(rustc --version | cut -d' ' -f1-2), PTXAS unset, a fresh clone of $(git rev-parse --short HEAD), $reps repetitions"
echo
echo "| from | to | time |"
echo "|---|---|---|"
echo "| a fresh clone, crates downloaded | \`cargo build --release -p host\` done | $(printf '%.0f s' "$first") |"
echo "| saving a kernel edit (\`gpu/src/kernels/lesson.rs\`) | the emulator's answer (\`cargo run --release -p host -- --emulate\`, whole lesson) | $kernel_edit |"
echo "| saving a kernel edit | the GPU build (\`cargo build --release -p host\`) | $gpu_build |"
echo "| saving an edit to a written \`solve()\` | the exercise's answer on the emulator (\`cargo run --release -p host -- exercise --emulate\`) | $solve_edit |"
