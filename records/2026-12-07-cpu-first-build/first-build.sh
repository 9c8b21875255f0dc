#!/usr/bin/env bash
# A learner's first builds, timed from empty target folders, before and
# after a change to the workspace's profiles: clones of two commits, each
# build run in turn (before, after, before, after) so that the machine's
# load falls on both alike. PTXAS unset, crates already downloaded.
# Usage: first-build.sh BEFORE AFTER ROUNDS   (commits of this repository)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
before=$1 after=$2 rounds=${3:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset PTXAS CARGO_TARGET_DIR CARGO_INCREMENTAL
for c in "$before" "$after"; do
  git clone -q "$repo" "$work/$c" && git -C "$work/$c" checkout -q "$c"
  (cd "$work/$c" && cargo fetch -q)
done
build() { # commit, what, cargo args...
  local c=$1 what=$2; shift 2
  rm -rf "$work/$c/target"
  local load; load=$(cut -d' ' -f1 /proc/loadavg)
  local s e; s=$(date +%s.%N)
  (cd "$work/$c" && cargo build -q --release -p host "$@" --timings 2>/dev/null)
  e=$(date +%s.%N)
  printf '%s %-9s %-8s %6.1f s  load %s\n' "$(date -u +%H:%M)" "$c" "$what" "$(echo "$e - $s" | bc)" "$load"
  # The units over 2 s, by duration: where the build's CPU went.
  python3 - "$work/$c/target/cargo-timings/cargo-timing.html" <<'PY'
import json, re, sys
units = json.loads(re.search(r'const UNIT_DATA = (\[.*?\]);', open(sys.argv[1]).read(), re.S).group(1))
top = sorted((u for u in units if u['duration'] > 2), key=lambda u: -u['duration'])
print('    ' + ', '.join(f"{u['name']}{' ' + u['target'].strip() if u['target'].strip() else ''} {u['duration']:.1f}" for u in top))
print(f"    sum of all units {sum(u['duration'] for u in units):.1f} s")
PY
}
for r in $(seq "$rounds"); do
  for c in "$before" "$after"; do build "$c" emulate --features host/emulator-only; done
done
for c in "$before" "$after"; do build "$c" gpu; done
