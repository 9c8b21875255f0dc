#!/usr/bin/env bash
# The whole GPU check, sanitizers on, on binaries staged by scripts/stage-gpu-run.sh;
# before it, the algorithms against CUB, and the time to load the algorithms'
# kernels from the sm_90 image and from PTX (the driver's JIT, its cache off).
set -u
mkdir -p "$OUT"
tar -xJf .carry/device.tar.xz
{
  for i in 1 2 3; do
    for v in algorithms algorithms-ptx; do
      s=$(date +%s%N); CUDA_CACHE_DISABLE=1 .device/$v --only reduce --n 1 > /dev/null 2>&1; rc=$?; e=$(date +%s%N)
      echo "$v, JIT cache off: $(( (e - s) / 1000000 )) ms (rc=$rc)"
    done
  done
  for i in 1 2; do
    s=$(date +%s%N); .device/algorithms-ptx --only reduce --n 1 > /dev/null 2>&1; rc=$?; e=$(date +%s%N)
    echo "algorithms-ptx, JIT cache on, run $i: $(( (e - s) / 1000000 )) ms (rc=$rc)"
  done
} > "$OUT/load-times.txt" 2>&1
cat "$OUT/load-times.txt"
.device/algorithms --bench --rounds "${ROUNDS:-11}" > "$OUT/algorithms-bench.txt" 2>&1; echo "algorithms --bench rc=$?" >> "$OUT/algorithms-bench.txt"
grep -E "against|^ +[0-9]|rc=" "$OUT/algorithms-bench.txt"
OUT="$OUT" SANITIZE=1 bash .device/gpu-check.sh > "$OUT/gpu-check.txt" 2>&1; rc=$?
echo "gpu-check rc=$rc"
grep -E "FAILED|gpu-check:|passed|failed" "$OUT/gpu-check.txt" | tail -15
