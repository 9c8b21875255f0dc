#!/usr/bin/env bash
cd "$(dirname "$0")"
R=$OUT/run; mkdir -p $R
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ptxas --version | tail -1; } > $R/sass.txt 2>&1
for f in non-aligned aligned; do
  echo "== $f: ptxas -v -arch=sm_90, conjugate_gradient_persistent" >> $R/sass.txt
  ptxas -v -arch=sm_90 $f.ptx -o $f.cubin 2>&1 | grep -A4 "entry function 'conjugate_gradient_persistent'" | grep -E "Used|spill" >> $R/sass.txt
  cuobjdump -sass -fun conjugate_gradient_persistent $f.cubin > $R/$f.sass 2>&1
  for op in BSSY BSYNC WARPSYNC "BAR.SYNC " "BAR.SYNC.DEFER_BLOCKING" BMOV; do echo "  $op: $(grep -c "$op" $R/$f.sass)" >> $R/sass.txt; done
done
