#!/usr/bin/env bash
# Where the exercise's own run goes (the wait after a solve() edit, less its
# build): the reference solver's whole run on the emulator (the T4's nine
# sizes, then the H200's two), timed five times, then sampled by perf.
# Run from the repository root after `cargo build --release -p host --features host/emulator-only`.
set -euo pipefail
bin=target/release/cg-lesson
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in 1 2 3 4 5; do /usr/bin/time -f "%e s wall, %U s user, %S s sys" "$bin" --emulate exercise --variant reference >/dev/null; done
perf record -q -F 2000 -g -o /tmp/exercise.perf "$bin" --emulate exercise --variant reference >/dev/null 2>&1
echo "perf, share of samples by symbol (self), over 1%:"
perf report -q -i /tmp/exercise.perf --no-children --sort dso,symbol -g none 2>/dev/null | awk '$1+0 >= 1.0' | sed 's/  */ /g' | cut -c1-160
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
