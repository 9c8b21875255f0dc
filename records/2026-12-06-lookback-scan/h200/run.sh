#!/usr/bin/env bash
# GPU call 3 of 2026-12-06: the look-back scan's tile (8 or 16 floats a
# thread, 256 threads) and its tile order (ticket or block index), each
# paired against CUB in its own process.
set -u
D=.carry/g3
R=${OUT:-/tmp/out}
mkdir -p "$R"
{ echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; } > "$R/machine.txt"
for items in 16 8; do
  for k in lookback lookback-by-index; do
    f="$R/bench-$k-items$items.txt"
    "$D/scan$items" --kernel $k --n 33,4096,1048583 --bench --rounds 8 > "$f" 2>&1; echo "rc=$?" >> "$f"
    echo "== items $items $k"; grep -E "^ +[0-9]+ " "$f" | tail -5
  done
done
"$D/scan16" --kernel lookback > "$R/ladder-items16.txt" 2>&1; echo "rc=$?" >> "$R/ladder-items16.txt"; tail -4 "$R/ladder-items16.txt"
