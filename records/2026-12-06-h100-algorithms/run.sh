#!/bin/bash
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
date -u | tee -a $OUT/gpu.txt
./algorithms-gpu-test --ignored 2>&1 | tail -5 | tee $OUT/gpu-test.txt
./algorithms --bench --rounds 11 2>&1 | tee $OUT/bench.txt
