#!/usr/bin/env bash
# GPU call 5 of 2026-12-06: the look-back scan's block size (128, 256, 512
# threads), floats per thread (16, 32) and pause between polls (none, 64 ns,
# 256 ns), tiles by block index; each binary paired against CUB in its own
# process (binary names: s<threads>i<items>b<pause ns>). Then the ticket.
set -u
D=.carry/g5
R=${OUT:-/tmp/out}
mkdir -p "$R"
{ echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; } > "$R/machine.txt"
for b in s256i16b64 s256i16b0 s256i16b256 s128i16b64 s128i32b64 s512i16b64; do
  f="$R/bench-$b.txt"
  "$D/$b" --kernel lookback-by-index --n 33,1048583 --bench --rounds 8 > "$f" 2>&1; echo "rc=$?" >> "$f"
  echo "== $b"; grep -E "^ +[0-9]+ " "$f" | tail -5 | cut -c1-80
done
f="$R/bench-s256i16b64-ticket.txt"
"$D/s256i16b64" --kernel lookback --n 33,1048583 --bench --rounds 8 > "$f" 2>&1; echo "rc=$?" >> "$f"
echo "== s256i16b64 ticket"; grep -E "^ +[0-9]+ " "$f" | tail -5 | cut -c1-80
