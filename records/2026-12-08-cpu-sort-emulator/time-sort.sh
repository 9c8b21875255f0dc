#!/usr/bin/env bash
# How long the radix sort of 2^20 random u32 keys takes on the emulator (an
# emulated T4, the release build for the emulator alone), whole and by
# phase: `algorithms --emulate --only sort-keys --n 1048576` by bits 0..8
# (the digit counts and one pass), 0..16 (two passes) and every bit (four),
# RUNS times each in turn; then the same program with --n 1 (start-up, and
# the CPU's reference sort is nothing), and a perf profile of the whole
# sort where perf is installed. Usage: time-sort.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
nice -n 10 cargo build --release -q -p algorithms --features emulator-only
B=target/release/algorithms
echo "date: $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
TIMEFORMAT='%R s wall, %U s user, %S s sys'
for run in $(seq "$runs"); do
  for bits in 0..8 0..16 0..32; do
    echo -n "run $run, bits $bits: "
    { time "$B" --emulate --only sort-keys --n 1048576 --bits "$bits" > /dev/null; } 2>&1
  done
done
echo -n "start-up (--n 1): "
{ time "$B" --emulate --only sort-keys --n 1 > /dev/null; } 2>&1
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if command -v perf > /dev/null; then
  perf record -q -o /tmp/sort-perf.data "$B" --emulate --only sort-keys --n 1048576 > /dev/null 2>&1
  echo "perf, the whole sort, self time by function (the first 20):"
  perf report -q -i /tmp/sort-perf.data --no-children --sort symbol 2>/dev/null | grep -E '^ +[0-9]' | head -20 | sed -E 's/ +$//; s/\s{2,}/  /g'
fi
