#!/usr/bin/env bash
# Select by blocks that loop (persistent) against one block per tile, each
# against CUB's DeviceSelect::If in its own process, alternating; the GPU
# tests and the sanitizers on the persistent build.
set -u
mkdir -p "$OUT"
cd .carry/sel
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
fails=0
r() { echo "=== $*" >> "$OUT/checks.txt"; "$@" >> "$OUT/checks.txt" 2>&1; rc=$?; echo "rc=$rc" >> "$OUT/checks.txt"; echo "$* rc=$rc"; [ $rc = 0 ] || fails=$((fails+1)); }
r ./persistent_select --include-ignored --test-threads=1
r ./algorithms_gpu --include-ignored --test-threads=1
r ./algorithms-persistent --only select,inclusive --n 1,33,4097,100003,1048579,4194307,16777219
for tool in memcheck racecheck synccheck; do r compute-sanitizer --tool $tool --error-exitcode 1 ./algorithms-persistent --only select --n 33,4097,100003,1048579; done
S=65536,1048576,4194304,8388608,16777216,67108864
for round in 1 2; do
  for v in onetile persistent; do
    echo "=== $v round $round" >> "$OUT/bench.txt"
    ./algorithms-$v --bench --only select --rounds 7 --n $S >> "$OUT/bench.txt" 2>&1; echo "rc=$?" >> "$OUT/bench.txt"
  done
done
grep -E "^===|^ +[0-9]|rc=" "$OUT/bench.txt"
grep -E "test result|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/checks.txt"
echo "failures: $fails"
