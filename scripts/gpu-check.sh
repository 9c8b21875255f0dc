#!/usr/bin/env bash
# Runs on a GPU machine, from the repo root, with binaries staged in .device/
# by scripts/stage-gpu-run.sh: the GPU tests, the lesson at several settings,
# the exercise with every solver, the tile sweep, bad input, the diagnosing
# barrier, the sanitizers (SANITIZE=1), and BENCH=k runs of the benchmark.
# Logs go to $RESULTS, packed into $OUT/results.tgz after every stage, so an
# interrupted run still returns what it finished.
set -u
OUT=${OUT:-gpu-results}
RESULTS=${RESULTS:-/tmp/gpu-results}
mkdir -p "$OUT" "$RESULTS"
pack() { tar -czf "$OUT/results.tgz" -C "$RESULTS" . ; }
D=.device
B="$D/cg-lesson"
{
  date -u +"date: %Y-%m-%dT%H:%MZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -2
} > "$RESULTS/machine.txt" 2>&1
cat "$RESULTS/machine.txt"
pack

# The lesson as a user runs it, first, on a fresh context.
"$B" > "$RESULTS/lesson.txt" 2>&1; echo "lesson rc=$?" | tee -a "$RESULTS/lesson.txt"
pack

# Test binaries: every test, the GPU ones included.
for t in "$D"/tests/*; do
  # CPU tests, run in CI: the emulator, the CLI, the compile-fail tests (which
  # need cargo), the PTX test (which needs ptxas) and the layers tests (which
  # reads the source tree); the GPU machine runs the ones that need a GPU.
  case "$(basename "$t")" in cli|clusters|emulated|emulator|emu_layers|guard|ptx|layers|multi|multi_gpu|multi_gpu_stranded|*-unit) continue ;; esac
  echo "=== $(basename "$t")"
  "$t" --include-ignored --test-threads=1 --nocapture 2>&1
done > "$RESULTS/tests.txt"
grep -E "^test result|FAILED|panicked" "$RESULTS/tests.txt"
pack

{
  for args in "--threads-per-block 32" "--threads-per-block 64" "--threads-per-block 1024" "--n 1" "--n 0" "--n 611" "--json --n 611"; do
    echo "=== cg-lesson $args"
    "$B" $args 2>&1; echo "rc=$?"
  done
  for t in 1 2 4 8 16; do
    echo "=== cg-lesson built with tiles of $t"
    "$D/cg-lesson-tile$t" --runs 3 2>&1 | grep -E "tiles of|limited by|two launches|cooperative launch|checks|FAILED"; echo "rc=$?"
  done
} > "$RESULTS/lesson-variants.txt"
grep -E "^===|rc=|checks|FAILED" "$RESULTS/lesson-variants.txt"
pack

for v in solve reference grid-from-n zero-grid round-down bounds-bug partials-if; do
  echo "=== cg-lesson exercise --variant $v"
  "$B" exercise --variant "$v" 2>&1; echo "rc=$?"
done > "$RESULTS/exercise.txt"
grep -E "^===|rc=|smallest|checks" "$RESULTS/exercise.txt"
pack

{
  echo "=== cg-lesson --n 4294967299 (2^32 + 3 floats, 16 GiB)"
  "$B" --n 4294967299 --runs 3 --warmups 1 2>&1; echo "rc=$?"
  for n in 1000000000000 18446744073709551615 18446744073709551614 4611686018427387904 4611686018427387903; do
    echo "=== cg-lesson --n $n"
    "$B" --n $n 2>&1; echo "rc=$?"
  done
  echo "=== cg-lesson --device 7"
  "$B" --device 7 2>&1; echo "rc=$?"
  echo "=== plain barrier: cg-lesson --runs 200 --warmups 20"
  "$B" --runs 200 --warmups 20 2>&1 | grep -A5 "^Time"
  echo "=== diagnosing barrier: cg-lesson-barrier-timeout --runs 200 --warmups 20"
  "$D/cg-lesson-barrier-timeout" --runs 200 --warmups 20 2>&1 | grep -A5 "^Time"
} > "$RESULTS/robustness.txt"
grep -E "^===|rc=|error|checks" "$RESULTS/robustness.txt"
pack

if [ -n "${SANITIZE:-}" ] && command -v compute-sanitizer >/dev/null; then
  bash "$D/sanitize.sh" "$B" "$D/tests/sanitizer_targets" > "$RESULTS/sanitizers.txt" 2>&1; echo "sanitizers rc=$?" | tee -a "$RESULTS/sanitizers.txt"
  tail -13 "$RESULTS/sanitizers.txt"
  pack
fi
if [ -n "${BENCH:-}" ]; then
  for k in $(seq 1 "${BENCH}"); do
    "$B" bench --out "$RESULTS/bench$k" ${BENCH_ARGS:-} > "$RESULTS/bench$k.txt" 2>&1; echo "bench $k rc=$?"
    pack
  done
  tail -40 "$RESULTS/bench1.txt"
fi
cp "$RESULTS/lesson.txt" "$OUT/lesson.txt"
tail -30 "$RESULTS/lesson.txt"
