#!/usr/bin/env bash
# The reduce and scans by operators of one's own, on the GPU: the test, the example, memcheck and racecheck.
set -u
mkdir -p "$OUT"; cd .carry/op
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/gpu.txt"
r() { echo "=== $*" >> "$OUT/checks.txt"; "$@" >> "$OUT/checks.txt" 2>&1; rc=$?; echo "rc=$rc" >> "$OUT/checks.txt"; echo "$* rc=$rc"; }
r ./operators --include-ignored --test-threads=1
r ./own_operator --gpu
r compute-sanitizer --tool memcheck --error-exitcode 1 ./own_operator --gpu
r compute-sanitizer --tool racecheck --error-exitcode 1 ./own_operator --gpu
grep -E "test result|ERROR SUMMARY|RACECHECK SUMMARY|largest|running|gcd" "$OUT/checks.txt"
