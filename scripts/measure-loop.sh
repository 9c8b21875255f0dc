#!/usr/bin/env bash
# The learner's loop, timed as a learner meets it: fresh clones of this
# repository, PTXAS unset, crates already downloaded, then the README's
# commands after real edits.
#   1. the first build for a GPU (`cargo build --release -p host`), in one clone;
#   2. in another, the first run on the emulator (`cargo emulate`, which builds
#      the program without PTX and runs the lesson on the emulated T4);
#   3. a kernel edit (the lesson's tile, 32 to 16, in gpu/src/lesson/lesson.rs),
#      then `cargo emulate` again, and the same edit then the GPU build; and
#      the block sum's warp reduction, `cg::reduce`, written as a `shfl_down`
#      loop in gpu/src/lesson/sum.rs, then `cargo emulate`;
#   4. a written solve() (ours, copied into exercise/solve.rs), built once, then
#      an edit to it (a line added, then taken out again), then
#      `cargo emulate exercise`.
# Each edit-to-answer time includes the build the edit causes. Prints a
# table with the date, the machine and its load average before and after,
# for the README to quote.
# Usage: scripts/measure-loop.sh [repetitions, default 3]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
reps=${1:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/gpu"
git clone -q "$repo" "$work/clone"
unset PTXAS CARGO_TARGET_DIR
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
  sort -n | awk 'NR == 1 { lo = sprintf("%.1f", $1) } { hi = sprintf("%.1f", $1) } END { if (lo == hi) printf "%s s", lo; else printf "%s-%s s", lo, hi }'
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
cd "$work/gpu"
cargo fetch -q
first_gpu=$(seconds cargo build --release -p host)
cd "$work/clone"
first_emulated=$(seconds cargo emulate)
grep -q "checks passed" "$work/last.log" || { echo "error: the emulated lesson did not pass" >&2; exit 1; }

lesson=gpu/src/lesson/lesson.rs
kernel_edit=$(for _ in $(seq "$reps"); do
  sed -i 's/<const TILE: u32 = 32>/<const TILE: u32 = 16>/' "$lesson"
  seconds cargo emulate
  grep -q "checks passed" "$work/last.log" || { echo "error: the edited lesson did not pass" >&2; exit 1; }
  sed -i 's/<const TILE: u32 = 16>/<const TILE: u32 = 32>/' "$lesson"
  cargo emulate >/dev/null 2>&1
done | range)

sum=gpu/src/lesson/sum.rs
reduce='    let tile_total = cg::reduce(tile, v, Plus);'
loop='    let mut tile_total = v;\n    let mut d = TILE \/ 2;\n    while d > 0 {\n        tile_total += tile.shfl_down(tile_total, d);\n        d \/= 2;\n    }'
grep -qF "$reduce" "$sum" || { echo "error: $sum has no '$reduce' to edit" >&2; exit 1; }
sum_edit=$(for _ in $(seq "$reps"); do
  sed -i "s/^$reduce\$/$loop/" "$sum"
  grep -q "shfl_down(tile_total, d)" "$sum" || { echo "error: could not edit $sum" >&2; exit 1; }
  seconds cargo emulate
  grep -q "checks passed" "$work/last.log" || { cat "$work/last.log" >&2; echo "error: the edited block sum did not pass" >&2; exit 1; }
  git checkout -q "$sum"
  cargo emulate >/dev/null 2>&1
done | range)

cargo build --release -p host -q

gpu_build=$(for _ in $(seq "$reps"); do
  sed -i 's/<const TILE: u32 = 32>/<const TILE: u32 = 16>/' "$lesson"
  seconds cargo build --release -p host
  sed -i 's/<const TILE: u32 = 16>/<const TILE: u32 = 32>/' "$lesson"
  cargo build --release -p host -q
done | range)

# A written solve(): ours, the reference's body written into the shipped
# file, as host/tests/written_solve.rs keeps it (and compiles it in CI).
solve=exercise/solve.rs
cp host/tests/written_solve/solve.rs "$solve"
grep -q "let launch = kernel.configure" "$solve" || { echo "error: could not write solve() into $solve" >&2; exit 1; }
cargo emulate exercise >"$work/last.log" 2>&1 || { cat "$work/last.log" >&2; echo "error: the written solve() did not build or pass" >&2; exit 1; }
solve_edit=$(for _ in $(seq "$reps"); do
  sed -i 's|^pub fn solve(gpu: &Gpu, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {$|&\n    let _edited = input.len();|' "$solve"
  grep -q "_edited" "$solve" || { echo "error: could not edit $solve" >&2; exit 1; }
  seconds cargo emulate exercise
  grep -q "checks passed" "$work/last.log" || { cat "$work/last.log" >&2; echo "error: the written solve() did not pass" >&2; exit 1; }
  sed -i '/let _edited = input.len();/d' "$solve"
  cargo emulate exercise >/dev/null 2>&1
done | range)

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo "The learner's loop, $(date -u +'%Y-%m-%d %H:%M UTC'), $(nproc) cores ($cpu), $(rustc --version | cut -d' ' -f1-2), PTXAS unset, a fresh clone of $(git rev-parse --short HEAD), $reps repetitions; load average (1, 5, 15 min) $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after"
echo
echo "| from | to | time |"
echo "|---|---|---|"
echo "| a fresh clone, crates downloaded | \`cargo build --release -p host\` done (for a GPU) | $(printf '%.0f s' "$first_gpu") |"
echo "| a fresh clone, crates downloaded | \`cargo emulate\`: built without PTX, and the lesson's answer on the emulated T4 | $(printf '%.0f s' "$first_emulated") |"
echo "| saving a kernel edit (\`gpu/src/lesson/lesson.rs\`) | the emulator's answer (\`cargo emulate\`, whole lesson) | $kernel_edit |"
echo "| saving an edit to the block sum (\`gpu/src/lesson/sum.rs\`: \`cg::reduce\` as a \`shfl_down\` loop) | the emulator's answer (\`cargo emulate\`, whole lesson) | $sum_edit |"
echo "| saving a kernel edit | the GPU build (\`cargo build --release -p host\`) | $gpu_build |"
echo "| saving an edit to a written \`solve()\` (\`exercise/solve.rs\`) | the exercise's answer on the emulator (\`cargo emulate exercise\`) | $solve_edit |"
