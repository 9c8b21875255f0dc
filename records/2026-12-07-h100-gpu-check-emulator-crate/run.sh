#!/usr/bin/env bash
# The whole GPU check, sanitizers on, with the host-overhead example before
# issue 63 (d74499a) and after (OVERHEAD=1), and before it the algorithms
# against CUB (run-length among them), on binaries staged by
# scripts/stage-gpu-run.sh.
set -u
mkdir -p "$OUT"
tar -xJf .carry/device.tar.xz
.device/algorithms --bench --rounds "${ROUNDS:-7}" > "$OUT/algorithms-bench.txt" 2>&1; echo "algorithms --bench rc=$?" >> "$OUT/algorithms-bench.txt"
grep -E "against|^ +[0-9]|rc=" "$OUT/algorithms-bench.txt" | tail -40
OUT="$OUT" OVERHEAD=1 SANITIZE=1 bash .device/gpu-check.sh > "$OUT/gpu-check.txt" 2>&1; rc=$?
echo "gpu-check rc=$rc"
grep -E "FAILED|gpu-check:|passed|failed" "$OUT/gpu-check.txt" | tail -15
