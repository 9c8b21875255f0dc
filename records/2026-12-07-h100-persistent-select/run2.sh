#!/usr/bin/env bash
set -u
mkdir -p "$OUT"; cd .carry/sel
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
S=8388608,16777216,33554432,67108864
for round in 1 2; do
  for v in persistent always; do
    echo "=== $v round $round" >> "$OUT/bench.txt"
    ./algorithms-$v --bench --only select --rounds 7 --n $S >> "$OUT/bench.txt" 2>&1; echo "rc=$?" >> "$OUT/bench.txt"
  done
done
echo "=== scans at 2^23" >> "$OUT/bench.txt"
./algorithms-persistent --bench --only inclusive,exclusive --rounds 7 --n 8388608 >> "$OUT/bench.txt" 2>&1; echo "rc=$?" >> "$OUT/bench.txt"
grep -E "^===|^ +[0-9]|rc=" "$OUT/bench.txt"
