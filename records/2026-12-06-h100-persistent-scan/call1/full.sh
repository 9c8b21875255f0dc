#!/bin/bash
# cg-algorithms against CUB first (quick), then the whole GPU check (sanitizers on).
tar -xJf .carry/device.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt; date -u >> $OUT/gpu.txt
.device/algorithms --bench --rounds 11 > $OUT/algorithms-bench.txt 2>&1; echo "algorithms --bench rc=$?" >> $OUT/algorithms-bench.txt
grep -E "against|^ +[0-9]|rc=" $OUT/algorithms-bench.txt
SANITIZE=1 bash .device/gpu-check.sh > $OUT/gpu-check.txt 2>&1; echo "gpu-check rc=$?" >> $OUT/gpu-check.txt
tail -5 $OUT/gpu-check.txt
