#!/usr/bin/env bash
# GPU call 7 of 2026-12-06: the look-back scan held to fewer registers
# (launch bounds of 256 threads and 6 or 8 blocks an SM), so that more tiles
# are in flight while each waits on its look-back; tiles by block index.
set -u
D=.carry/g7
R=${OUT:-/tmp/out}
mkdir -p "$R"
{ echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; } > "$R/machine.txt"
for b in base16 lb6_16 lb8_16 lb8_8; do
  f="$R/bench-$b.txt"
  "$D/$b" --kernel lookback-by-index --n 33,1048583 --bench --rounds 8 > "$f" 2>&1; echo "rc=$?" >> "$f"
  echo "== $b"; grep -E "^ +[0-9]+ " "$f" | tail -5 | cut -c1-72
done
