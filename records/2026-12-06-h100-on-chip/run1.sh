#!/usr/bin/env bash
# Call 1: the on-chip conjugate-gradient path: GPU tests, sanitizers, benches.
set -u
D=.device; B=$D/cg-lesson; L=$OUT/run1.log
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; nvcc --version | tail -2; } > $OUT/machine.txt 2>&1
cat $OUT/machine.txt > $L
echo "=== GPU tests (conjugate gradient)" >> $L
$D/gpu-tests --include-ignored --test-threads=1 conjugate_gradient on_chip >> $L 2>&1; echo "gpu-tests rc=$?" >> $L
for tool in memcheck racecheck synccheck; do
  echo "=== compute-sanitizer $tool --poisson 64" >> $L
  compute-sanitizer --tool $tool --error-exitcode 1 $B conjugate-gradient --poisson 64 >> $L 2>&1; echo "$tool 64 rc=$?" >> $L
done
echo "=== compute-sanitizer memcheck --poisson 512" >> $L
compute-sanitizer --tool memcheck --error-exitcode 1 $B conjugate-gradient --poisson 512 >> $L 2>&1; echo "memcheck 512 rc=$?" >> $L
mkdir -p $OUT/poisson $OUT/tri
echo "=== bench poisson" >> $L
$B conjugate-gradient --poisson 1024 --bench --rounds 7 --out $OUT/poisson > $OUT/poisson/bench.txt 2>&1; echo "poisson bench rc=$?" >> $L
echo "=== bench tridiagonal" >> $L
$B conjugate-gradient --bench --rounds 7 --out $OUT/tri > $OUT/tri/bench.txt 2>&1; echo "tri bench rc=$?" >> $L
grep -E "rc=|test result|ERROR SUMMARY|FAIL" $L
tail -30 $OUT/poisson/bench.txt
