#!/usr/bin/env bash
# Static shared arrays on the GPU: the test, then memcheck, racecheck and initcheck on it.
set -u
mkdir -p "$OUT"; cd .carry/ss
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/gpu.txt"
r() { echo "=== $*" >> "$OUT/checks.txt"; "$@" >> "$OUT/checks.txt" 2>&1; rc=$?; echo "rc=$rc" >> "$OUT/checks.txt"; echo "$* rc=$rc"; }
r ./static_shared --include-ignored --test-threads=1
for tool in memcheck racecheck initcheck; do r compute-sanitizer --tool $tool --error-exitcode 1 ./static_shared --include-ignored --test-threads=1 the_arrays_follow_the_dynamic_part_on_the_gpu; done
grep -E "test result|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/checks.txt"
