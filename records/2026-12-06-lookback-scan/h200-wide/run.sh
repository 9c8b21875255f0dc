#!/usr/bin/env bash
# GPU call 6 of 2026-12-06: the look-back by the whole block (a window of
# 256 tiles, two block reductions each) against warp 0's (32 tiles), 256 x 16,
# by ticket and by block index, each paired against CUB; interleaved twice.
set -u
D=.carry/g6
R=${OUT:-/tmp/out}
mkdir -p "$R"
{ echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; } > "$R/machine.txt"
for pass in 1 2; do
  for b in wide warp; do
    for k in lookback lookback-by-index; do
      f="$R/bench-$b-$k-$pass.txt"
      "$D/$b" --kernel $k --n 33,1048583 --bench --rounds 8 > "$f" 2>&1; echo "rc=$?" >> "$f"
      echo "== $b $k pass $pass"; grep -E "^ +[0-9]+ " "$f" | tail -5 | cut -c1-72
    done
  done
done
"$D/wide" --kernel lookback > "$R/ladder-wide.txt" 2>&1; echo "rc=$?" >> "$R/ladder-wide.txt"; tail -4 "$R/ladder-wide.txt"
compute-sanitizer --tool racecheck --error-exitcode 1 "$D/wide" --kernel lookback --n 33,4097,1048583 > "$R/racecheck-wide.txt" 2>&1; echo "rc=$?" >> "$R/racecheck-wide.txt"; tail -2 "$R/racecheck-wide.txt"
