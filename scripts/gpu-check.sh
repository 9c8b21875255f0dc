#!/usr/bin/env bash
# Runs on a GPU machine, from the repo root, with binaries staged in .device/
# by scripts/stage-gpu-run.sh: the GPU tests, the lesson at several settings,
# the exercise with every solver, the tile sweep, bad input, the diagnosing
# barrier, the sanitizers (SANITIZE=1), and BENCH=k runs of the benchmark.
# Logs go to $RESULTS, packed into $OUT/results.tgz after every stage, so an
# interrupted run still returns what it finished.
#
# PART=1 runs the lesson, the test binaries, the lesson's variants, the
# exercise and the robustness runs; PART=2 the toolkit, the sanitizers and
# the optional benches: the whole check in two calls, where one machine call
# may run 10 minutes. Without PART, all of it.
#
# Every run has the exit status it must have (0, or non-zero for a mistake
# made on purpose), and no program run may panic. Each miss is a line
# `FAILED: <what>` as it happens and again in the summary at the end, and
# the script exits 1; with none it ends `gpu-check: passed` and exits 0.
set -u
OUT=${OUT:-gpu-results}
RESULTS=${RESULTS:-/tmp/gpu-results}
mkdir -p "$OUT" "$RESULTS"
pack() { tar -czf "$OUT/results.tgz" -C "$RESULTS" . ; }
D=.device
B="$D/cg-lesson"
failures=()
fail() { failures+=("$1"); echo "FAILED: $1"; }
# expect WHAT WANT RC: WANT is 0 or "nonzero".
expect() {
  if [ "$2" = 0 ] && [ "$3" != 0 ]; then fail "$1: exit $3, expected 0"; fi
  if [ "$2" = nonzero ] && [ "$3" = 0 ]; then fail "$1: exit 0, expected a non-zero exit"; fi
}
# run LOG WANT ARGS...: runs the program, appends its output and exit to LOG,
# and holds it to WANT and to no panic.
run() {
  local log=$1 want=$2; shift 2
  echo "=== $(basename "$1") ${*:2}" >> "$log"
  local out rc
  out=$("$@" 2>&1); rc=$?
  printf '%s\nrc=%s\n' "$out" "$rc" >> "$log"
  expect "$(basename "$1") ${*:2}" "$want" "$rc"
  if grep -q "panicked" <<<"$out"; then fail "$(basename "$1") ${*:2}: panicked"; fi
}
# Whether this run includes part $1 (see PART above).
in_part() { [ -z "${PART:-}" ] || [ "$PART" = "$1" ]; }
{
  date -u +"date: %Y-%m-%dT%H:%MZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -2
} > "$RESULTS/machine.txt" 2>&1
cat "$RESULTS/machine.txt"
pack

if in_part 1; then
# The lesson as a user runs it, first, on a fresh context.
"$B" > "$RESULTS/lesson.txt" 2>&1; rc=$?; echo "lesson rc=$rc" | tee -a "$RESULTS/lesson.txt"
expect "the lesson" 0 "$rc"
pack

# Test binaries: every test, the GPU ones included. Their output is captured
# (shown only for a test that fails): tests that feed the exercise's harness
# wrong solvers on purpose print its FAILED lines, which are not failures.
for t in "$D"/tests/*; do
  # CPU tests, run in CI: the emulator, the CLI, the compile-fail tests (which
  # need cargo), the PTX test (which needs ptxas) and the layers tests (which
  # reads the source tree, as the docs tests do), the quoted outputs (which
  # build a copy of the repository with cargo), the scan's ladder on the
  # emulator, the walk of your-own-kernel.md (which needs cargo) and the
  # written solve() (the emulator, and a file of the source tree),
  # cg-algorithms' chapter (which runs its example with cargo) and the
  # sort's emulator tests (sort_emulator, sort_kernels); the GPU
  # machine runs the ones that need a GPU.
  case "$(basename "$t")" in chapter|cli|clusters|doc_quotes|emulated|emulator|emulator_clusters|emulator_watchdog|emu_layers|barrier_model|guard|doors|params|crate_path|emulated_reports|ptx|layers|docs|doc_commands|multi|multi_gpu|multi_gpu_stranded|ladder|your_own_kernel|written_solve|algorithms_emulator|sort_emulator|sort_kernels|*-unit) continue ;; esac
  echo "=== $(basename "$t")" >> "$RESULTS/tests.txt"
  # The status first: a $(...) in an argument before `$?` would reset it
  # to the substitution's 0 (how every test binary's failure went unseen
  # until 2026-12-04).
  "$t" --include-ignored --test-threads=1 >> "$RESULTS/tests.txt" 2>&1; rc=$?
  expect "tests/$(basename "$t")" 0 "$rc"
done
grep -E "^test result|FAILED|panicked" "$RESULTS/tests.txt"
pack

L="$RESULTS/lesson-variants.txt"
for args in "--threads-per-block 32" "--threads-per-block 64" "--threads-per-block 1024" "--n 1" "--n 0" "--n 611" "--json --n 611"; do
  # shellcheck disable=SC2086
  run "$L" 0 "$B" $args
done
for t in 1 2 4 8 16; do
  run "$L" 0 "$D/cg-lesson-tile$t" --runs 3
done
grep -E "^===|rc=|checks|FAILED" "$L"
pack

E="$RESULTS/exercise.txt"
# The shipped solve() is the learner's to write (it fails); `reference` is
# ours; every other variant is a mistake the harness must fail by name.
for v in solve reference grid-from-n zero-grid round-down bounds-bug partials-if grid-reduce; do
  want=nonzero; [ "$v" = reference ] || [ "$v" = grid-reduce ] && want=0
  run "$E" "$want" "$B" exercise --variant "$v"
done
grep -E "^===|rc=|smallest|checks" "$E"
pack

R="$RESULTS/robustness.txt"
run "$R" 0 "$B" --n 4294967299 --runs 3 --warmups 1
for n in 1000000000000 18446744073709551615 18446744073709551614 4611686018427387904 4611686018427387903; do
  run "$R" nonzero "$B" --n "$n"
done
run "$R" nonzero "$B" --device 7
{
  echo "=== plain barrier: cg-lesson --runs 200 --warmups 20"
  "$B" --runs 200 --warmups 20 2>&1 | grep -A5 "^Time"
  echo "=== diagnosing barrier: cg-lesson-barrier-timeout --runs 200 --warmups 20"
  "$D/cg-lesson-barrier-timeout" --runs 200 --warmups 20 2>&1 | grep -A5 "^Time"
} >> "$R"
grep -E "^===|rc=|error|checks" "$R"
pack

fi
if in_part 2; then
# The toolkit on its own: the grid-wide scan (examples/scan, its ladder to
# 2^26 each element within its bound; its three kernels: the two
# grid-barrier ones and the one-pass look-back, cg-algorithms') and the program of
# docs/your-own-kernel.md, each built on the three library crates alone.
K="$RESULTS/toolkit.txt"
for program in scan compact histogram algorithms bfs grid-costs my-app; do
  [ -x "$D/$program" ] || fail "$program is not staged (scripts/stage-gpu-run.sh builds it)"
done
run "$K" 0 "$D/scan"
run "$K" 0 "$D/scan" --once
run "$K" 0 "$D/scan" --kernel lookback
run "$K" nonzero "$D/scan" --n 0
run "$K" 0 "$D/compact"
run "$K" 0 "$D/compact" --library
run "$K" nonzero "$D/compact" --n 0
run "$K" 0 "$D/histogram"
run "$K" 0 "$D/histogram" --library
run "$K" nonzero "$D/histogram" --n 0
run "$K" 0 "$D/algorithms"
run "$K" 0 "$D/bfs"
run "$K" 0 "$D/grid-costs" --calls 50 --rounds 2 --runs 1
run "$K" 0 "$D/my-app"
if [ -n "${SANITIZE:-}" ] && command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck synccheck; do
    run "$K" 0 compute-sanitizer --tool "$tool" --error-exitcode 1 "$D/scan" --n 33,4096,1048583
    run "$K" 0 compute-sanitizer --tool "$tool" --error-exitcode 1 "$D/scan" --once --n 33,4096,1048583,16777216
    run "$K" 0 compute-sanitizer --tool "$tool" --error-exitcode 1 "$D/scan" --kernel lookback --n 33,4097,1048583
    run "$K" 0 compute-sanitizer --tool "$tool" --error-exitcode 1 "$D/compact" --n 33,4096,1048583
    run "$K" 0 compute-sanitizer --tool "$tool" --error-exitcode 1 "$D/histogram" --n 5,4097,1048583
    run "$K" 0 compute-sanitizer --tool "$tool" --error-exitcode 1 "$D/algorithms" --n 33,4097,100003
    run "$K" 0 compute-sanitizer --tool "$tool" --error-exitcode 1 "$D/bfs" --n 100000
    # The grid collectives, each form, on grids to 1,000 blocks.
    run "$K" 0 compute-sanitizer --tool "$tool" --error-exitcode 1 "$D/tests/grid_collectives" --include-ignored --test-threads=1 grid_select_and_histogram_are_right_on_the_gpu
  done
fi
grep -E "^===|rc=|pass|FAIL|error" "$K" | grep -v "^ *[0-9]* .*pass$"
pack

if [ -n "${SANITIZE:-}" ]; then
  if command -v compute-sanitizer >/dev/null; then
    bash "$D/sanitize.sh" "$B" "$D/tests/sanitizer_targets" > "$RESULTS/sanitizers.txt" 2>&1; rc=$?
    echo "sanitizers rc=$rc" | tee -a "$RESULTS/sanitizers.txt"
    expect "sanitizers (scripts/sanitize.sh)" 0 "$rc"
    grep -E "FAILED" "$RESULTS/sanitizers.txt"
    tail -13 "$RESULTS/sanitizers.txt"
  else
    fail "SANITIZE=1, but compute-sanitizer is not on PATH"
  fi
  pack
fi
if [ -n "${EXAMPLES_BENCH:-}" ]; then
  # The toolkit's examples against CUB, paired and alternating (each builds
  # CUB's side with nvcc): the scan, the compaction, the histogram.
  for program in scan compact histogram; do
    "$D/$program" --n 1 --bench --rounds "${EXAMPLES_ROUNDS:-15}" > "$RESULTS/$program-bench.txt" 2>&1; rc=$?
    echo "$program --bench rc=$rc" >> "$RESULTS/$program-bench.txt"
    expect "$program --bench" 0 "$rc"
    tail -12 "$RESULTS/$program-bench.txt"
    pack
  done
  # cg-algorithms' calls against CUB's, each size of issue 62.
  "$D/algorithms" --bench --rounds "${EXAMPLES_ROUNDS:-15}" > "$RESULTS/algorithms-bench.txt" 2>&1; rc=$?
  echo "algorithms --bench rc=$rc" >> "$RESULTS/algorithms-bench.txt"
  expect "algorithms --bench" 0 "$rc"
  grep -E "against|^ +[0-9]" "$RESULTS/algorithms-bench.txt"
  pack
  # The compaction and the histogram as cg-algorithms' calls, against CUB in the same way.
  for program in compact histogram; do
    "$D/$program" --library --n 1 --bench --rounds "${EXAMPLES_ROUNDS:-15}" > "$RESULTS/$program-library-bench.txt" 2>&1; rc=$?
    echo "$program --library --bench rc=$rc" >> "$RESULTS/$program-library-bench.txt"
    expect "$program --library --bench" 0 "$rc"
    tail -12 "$RESULTS/$program-library-bench.txt"
    pack
  done
  # The grid collectives against one grid.sync(), and the BFS in one launch
  # (grid.select_items) against a launch per level (select_flagged).
  "$D/grid-costs" --rounds "${EXAMPLES_ROUNDS:-15}" > "$RESULTS/grid-costs.txt" 2>&1; rc=$?
  echo "grid-costs rc=$rc" >> "$RESULTS/grid-costs.txt"
  expect "grid-costs" 0 "$rc"
  tail -20 "$RESULTS/grid-costs.txt"
  "$D/bfs" --bench --rounds "${EXAMPLES_ROUNDS:-15}" > "$RESULTS/bfs-bench.txt" 2>&1; rc=$?
  echo "bfs --bench rc=$rc" >> "$RESULTS/bfs-bench.txt"
  expect "bfs --bench" 0 "$rc"
  tail -4 "$RESULTS/bfs-bench.txt"
  pack
  # The scan that reads its input once, against CUB in the same way.
  "$D/scan" --once --n 1 --bench --rounds "${EXAMPLES_ROUNDS:-15}" > "$RESULTS/scan-once-bench.txt" 2>&1; rc=$?
  echo "scan --once --bench rc=$rc" >> "$RESULTS/scan-once-bench.txt"
  expect "scan --once --bench" 0 "$rc"
  tail -12 "$RESULTS/scan-once-bench.txt"
  pack
fi
if [ -n "${OVERHEAD:-}" ]; then
  # Host cost per call, the launcher before issue 55 and after, in turn:
  # after, before, after, before, ... (each binary a fresh process).
  O="$RESULTS/overhead.txt"
  for k in 1 2 3 4; do
    for which in after before; do
      [ -x "$D/overhead-$which" ] || continue
      echo "=== overhead-$which, run $k" >> "$O"
      "$D/overhead-$which" 15 >> "$O" 2>&1; rc=$?
      expect "overhead-$which run $k" 0 "$rc"
    done
  done
  tail -16 "$O"
  pack
fi
if [ -n "${BENCH:-}" ]; then
  for k in $(seq 1 "${BENCH}"); do
    # shellcheck disable=SC2086
    "$B" bench --out "$RESULTS/bench$k" ${BENCH_ARGS:-} > "$RESULTS/bench$k.txt" 2>&1; rc=$?
    echo "bench $k rc=$rc"
    expect "bench $k" 0 "$rc"
    pack
  done
  tail -40 "$RESULTS/bench1.txt"
fi
fi
if in_part 1; then
  cp "$RESULTS/lesson.txt" "$OUT/lesson.txt"
  tail -30 "$RESULTS/lesson.txt"
fi
echo
if [ ${#failures[@]} -gt 0 ]; then
  echo "gpu-check: ${#failures[@]} FAILED:"
  printf '  FAILED: %s\n' "${failures[@]}"
  pack
  exit 1
fi
echo "gpu-check: passed${PART:+ (part $PART of 2)}"
