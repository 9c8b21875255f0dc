#!/usr/bin/env bash
set -u
mkdir -p "$OUT"; cd .carry/sel
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
S=1048576,4194304,8388608,16777216,33554432,67108864
./algorithms-scanalways --only inclusive,exclusive,select --n 1,33,4097,100003,1048579,4194307,16777219,67108867 > "$OUT/checks.txt" 2>&1; echo "ladder rc=$?"
for round in 1 2; do
  for v in always scanalways; do
    echo "=== $v round $round" >> "$OUT/bench.txt"
    ./algorithms-$v --bench --only inclusive,exclusive --rounds 7 --n $S >> "$OUT/bench.txt" 2>&1; echo "rc=$?" >> "$OUT/bench.txt"
  done
done
grep -E "^===|against|^ +[0-9]|rc=" "$OUT/bench.txt"
