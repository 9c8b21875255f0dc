#!/usr/bin/env bash
# Every test, from a fresh clone: installs what the tests need, then runs the
# workspace's tests and the diagnosing-barrier build's test. The README's test
# command; .ci/run runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

rustup toolchain install nightly-2026-05-20 --profile minimal --component rust-src --component rustfmt --component clippy

# ptxas, for the PTX test, from NVIDIA's PyPI package into a folder under
# target/: pip installs into a folder of ours (--target) even where the
# system's Python is externally managed (Debian, Ubuntu).
ptxas=target/ptxas-pkg/nvidia/cuda_nvcc/bin/ptxas
if [ ! -x "$ptxas" ]; then
  if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "error: the PTX test needs ptxas, installed with Python's pip, which is missing: install it (Debian, Ubuntu: sudo apt install python3-pip), or set PTXAS to a ptxas" >&2
    exit 1
  fi
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --target target/ptxas-pkg nvidia-cuda-nvcc-cu12==12.9.86
fi

cargo test --workspace
# The diagnosing grid barrier is a build feature, so its test is its own build.
cargo test -p host --features barrier-timeout --test barrier_timeout --test barrier_timeout_watched --test barrier_timeout_shared
echo "tests: all passed"

# Style, after the tests, so that it never hides a result: the layout rustfmt
# gives (rustfmt.toml) and no lint clippy raises (each lint the code keeps is
# an `allow` with its reason). A learner's correct code that a lint dislikes
# (`(n + 255) / 256` for `n.div_ceil(256)`) is reported here, not failed;
# CI sets STRICT_STYLE=1, where style fails the run.
style_failed=0
cargo fmt --check || style_failed=1
cargo clippy --workspace --all-targets --features host/barrier-timeout -- -D warnings || style_failed=1
if [ "$style_failed" = 1 ]; then
  if [ "${STRICT_STYLE:-0}" = 1 ]; then
    echo "error: style: the code above is correct by the tests but not formatted (cargo fmt) or lint-clean (cargo clippy)" >&2
    exit 1
  fi
  echo "style: the tests passed; cargo fmt / cargo clippy would change the code above (a style note, not a failure; CI fails on it)" >&2
fi
