#!/usr/bin/env bash
# Runs on a GPU machine from the repo root, with binaries staged in .device/ by
# scripts/stage-gpu-run.sh: the GPU tests, the lesson at several settings and
# the exercise with every variant. Logs go to $OUT (or ./gpu-results).
set -u
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
D=.device
{
  date -u +"date: %Y-%m-%dT%H:%MZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -2
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

# Test binaries: every test, the GPU ones included.
for t in "$D"/tests/*; do
  case "$(basename "$t")" in cli|emulated) continue ;; esac  # CPU tests that run the binary by its build path
  echo "=== $(basename "$t")"
  "$t" --include-ignored --test-threads=1 --nocapture 2>&1
done > "$OUT/tests.txt"
grep -E "^test result|FAILED|panicked" "$OUT/tests.txt"

# The lesson as a user runs it, then the issue's other settings.
"$D/host" > "$OUT/lesson.txt" 2>&1; echo "lesson rc=$?" | tee -a "$OUT/lesson.txt"
for args in "--block 64" "--block 1024" "--n 1" "--n 0" "--n 611"; do
  echo "=== host $args"
  "$D/host" $args 2>&1; echo "rc=$?"
done > "$OUT/lesson-variants.txt"
grep -E "^===|rc=|checks|FAILED" "$OUT/lesson-variants.txt"
"$D/host" --json > "$OUT/lesson.json" 2>>"$OUT/lesson-variants.txt"; echo "json rc=$?"

# The exercise with each solver.
for v in solve grid-from-n zero-grid bounds-bug; do
  echo "=== host exercise --variant $v"
  "$D/host" exercise --variant "$v" 2>&1; echo "rc=$?"
done > "$OUT/exercise.txt"
grep -E "^===|rc=|smallest|checks" "$OUT/exercise.txt"
# Sizes past 2^32, bad input a GPU machine can show, and the diagnosing barrier's cost.
{
  echo "=== host --n 4294967299 (2^32 + 3 floats, 16 GiB)"
  "$D/host" --n 4294967299 --runs 5 --warmups 1 2>&1; echo "rc=$?"
  echo "=== host --n 1000000000000 (4 TB)"
  "$D/host" --n 1000000000000 2>&1; echo "rc=$?"
  echo "=== host --device 7"
  "$D/host" --device 7 2>&1; echo "rc=$?"
  echo "=== plain barrier: host --runs 200 --warmups 20"
  "$D/host" --runs 200 --warmups 20 2>&1 | grep -A2 "^Time"
  echo "=== diagnosing barrier: host-barrier-timeout --runs 200 --warmups 20"
  "$D/host-barrier-timeout" --runs 200 --warmups 20 2>&1 | grep -A2 "^Time"
} > "$OUT/robustness.txt"
grep -E "^===|rc=|error|two launches|one cooperative|checks" "$OUT/robustness.txt"

if command -v compute-sanitizer >/dev/null; then
  bash "$D/sanitize.sh" "$D/host" > "$OUT/sanitizers.txt" 2>&1; echo "sanitizers rc=$?" | tee -a "$OUT/sanitizers.txt"
  cat "$OUT/sanitizers.txt"
fi
if [ -n "${BENCH:-}" ]; then
  "$D/host" bench --plot "$OUT/bench-bandwidth.svg" --json > "$OUT/bench.json" 2> "$OUT/bench-progress.txt"; echo "bench rc=$?"
fi
cat "$OUT/lesson.txt"
