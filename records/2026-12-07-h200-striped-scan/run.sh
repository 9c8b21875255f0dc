#!/usr/bin/env bash
# Experiment run: histogram variants and the striped scan, each against CUB
# in one process (algorithms from branch exp-hist), and the SASS of the
# histogram kernels.
set -u
mkdir -p "$OUT"
cd .carry
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; } > "$OUT/gpu.txt"
cat "$OUT/gpu.txt"
ptxas -arch=sm_90 -v alg.ptx -o alg.cubin > "$OUT/ptxas-v.txt" 2>&1
cuobjdump -sass alg.cubin > /tmp/sass.txt 2>&1
python3 - <<'PY' > "$OUT/sass-summary.txt"
import re
cur=None; counts={}
for line in open('/tmp/sass.txt'):
    m=re.search(r'Function : (\S+)', line)
    if m: cur=m.group(1); counts[cur]={}; continue
    if cur and ('histogram' in cur or 'striped' in cur or 'inclusive_sum_f32' in cur):
        for op in ['ATOMS.POPC.INC','ATOMS.ADD','ATOMS','RED','ATOM','LDG.E.128','STG.E.128','LDG','STG','SHFL','LDS','STS','BRA','BSSY']:
            if re.search(r'\b'+re.escape(op)+r'\b', line):
                counts[cur][op]=counts[cur].get(op,0)+1
                break
for k,v in counts.items():
    if v: print(k, v)
PY
cat "$OUT/sass-summary.txt"
grep -A2 "histogram\|striped\|inclusive_sum_f32" "$OUT/ptxas-v.txt" | grep -i "registers\|Compiling" | head -40
S=1048576,4194304,16777216,67108864
R=${ROUNDS:-7}
VARIANTS="HIST_VARIANT=0 HIST_VARIANT=1 HIST_VARIANT=2 HIST_VARIANT=3 HIST_VARIANT=1 HIST_VARIANT=0" ONLY=4 ./alg-exp --bench --rounds $R --n $S > "$OUT/hist.txt" 2>&1; echo "hist rc=$?" >> "$OUT/hist.txt"
grep -E "###|^ +[0-9]|rc=" "$OUT/hist.txt"
VARIANTS="HIST_VARIANT=0,HIST_CONST=1 HIST_VARIANT=1,HIST_CONST=1 HIST_VARIANT=2,HIST_CONST=1" ONLY=4 ./alg-exp --bench --rounds $R --n $S > "$OUT/hist-const.txt" 2>&1; echo "hist-const rc=$?" >> "$OUT/hist-const.txt"
grep -E "###|^ +[0-9]|rc=" "$OUT/hist-const.txt"
VARIANTS="SCAN_VARIANT=0 SCAN_VARIANT=1 SCAN_VARIANT=0 SCAN_VARIANT=1" ONLY=1,2 ./alg-exp --bench --rounds $R --n 65536,$S > "$OUT/scan.txt" 2>&1; echo "scan rc=$?" >> "$OUT/scan.txt"
grep -E "###|against|^ +[0-9]|rc=" "$OUT/scan.txt"
# correctness of the variants: the check ladder, each variant
for v in "HIST_VARIANT=1" "HIST_VARIANT=2" "HIST_VARIANT=3" "SCAN_VARIANT=1"; do env $v ONLY=1,2,4 ./alg-exp > "$OUT/check-$v.txt" 2>&1; echo "check $v rc=$?"; grep -c pass "$OUT/check-$v.txt"; grep FAIL "$OUT/check-$v.txt"; done
