#!/usr/bin/env bash
# Experiment run 2: the histogram's counting loop specialized per bin rule
# (HIST_VARIANT=4), its grid span (bytes per block at least) and its block
# size, each against CUB in one process (algorithms from 27c290c + exp2.diff).
set -u
mkdir -p "$OUT"
cd .carry
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; } > "$OUT/gpu.txt"
cat "$OUT/gpu.txt"
ptxas -arch=sm_90 -v alg2.ptx -o alg2.cubin > "$OUT/ptxas-v.txt" 2>&1
cuobjdump -sass -fun histogram_v4 alg2.cubin | grep -cE "ATOMS|BRA" > "$OUT/sass-v4.txt" 2>&1
cuobjdump -sass -fun histogram_even_u8 alg2.cubin | grep -cE "ATOMS|BRA" >> "$OUT/sass-v4.txt" 2>&1
S=1048576,4194304,16777216,67108864
R=${ROUNDS:-7}
d() { echo "HIST_VARIANT=${1:-0},HIST_SPAN=${2:-4096},HIST_THREADS=${3:-256},HIST_CONST=${4:-0}"; }
V="$(d) $(d 4) $(d 0 16384) $(d 0 65536) $(d 0 4096 512) $(d 0 4096 1024) $(d 4 16384 1024) $(d 4 65536 512) $(d)"
VARIANTS="$V" ONLY=4 ./alg2 --bench --rounds $R --n $S > "$OUT/hist.txt" 2>&1; echo "hist rc=$?" >> "$OUT/hist.txt"
grep -E "###|experiment|^ +[0-9]|rc=" "$OUT/hist.txt"
V="$(d 0 4096 256 1) $(d 4 4096 256 1) $(d 0 4096 1024 1) $(d 4 16384 1024 1)"
VARIANTS="$V" ONLY=4 ./alg2 --bench --rounds $R --n 16777216,67108864 > "$OUT/hist-const.txt" 2>&1; echo "hist-const rc=$?" >> "$OUT/hist-const.txt"
grep -E "###|experiment|^ +[0-9]|rc=" "$OUT/hist-const.txt"
VARIANTS="SELECT_VARIANT=0 SELECT_VARIANT=1 SELECT_VARIANT=0 SELECT_VARIANT=1" ONLY=3 ./alg2 --bench --rounds $R --n 65536,$S > "$OUT/select.txt" 2>&1; echo "select rc=$?" >> "$OUT/select.txt"
grep -E "###|experiment|^ +[0-9]|rc=" "$OUT/select.txt"
for v in SELECT_VARIANT=1 HIST_VARIANT=4 HIST_THREADS=1024 HIST_SPAN=65536; do env $v ONLY=3,4 ./alg2 > "$OUT/check-$(echo $v | tr = -).txt" 2>&1; echo "check $v rc=$?"; grep -c pass "$OUT/check-$(echo $v | tr = -).txt"; grep FAIL "$OUT/check-$(echo $v | tr = -).txt"; done
