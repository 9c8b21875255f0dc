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

# The layout rustfmt gives (rustfmt.toml), and no lint clippy raises: each
# lint the code keeps is an `allow` with its reason.
cargo fmt --check
cargo clippy --workspace --all-targets --features host/barrier-timeout -- -D warnings

cargo test --workspace
# The diagnosing grid barrier is a build feature, so its test is its own build.
cargo test -p host --features barrier-timeout --test barrier_timeout
