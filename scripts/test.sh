#!/usr/bin/env bash
# Every test, from a fresh clone: installs what the tests need, then runs the
# workspace's tests and the diagnosing-barrier build's test. The README's test
# command; .ci/run runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

rustup toolchain install nightly-2026-05-20 --profile minimal --component rust-src --component rustfmt --component clippy
# Miri, for the one test of Shared's host accesses from two threads (below):
# the tests need it, a learner's builds do not, so it is not in
# rust-toolchain.toml.
rustup component add --toolchain nightly-2026-05-20 miri

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

# The crates whose build.rs runs cg-builder find this ptxas through PTXAS.
export PTXAS="${PTXAS:-$PWD/$ptxas}"
# The traced PTX module too (host/traced: a program builds it only when asked
# for), so that the PTX test assembles it as it does the others.
cargo test --workspace --features host/traced
# The diagnosing grid barrier is a build feature, so its test is its own build.
cargo test -p host --features barrier-timeout --test barrier_timeout --test barrier_timeout_watched
# The tests that show two of the launcher's checks can fail use its mutants
# (`Gpu::mutant_*`), which exist only under `--cfg cg_mutants`: set here, by
# a profile of this workspace for the launcher and the program alone
# (nightly cargo's -Zprofile-rustflags), which no dependent's feature or
# manifest can set. The doors test checks that the feature alone opens none.
mutants=(-Zprofile-rustflags --config 'profile.dev.package.cg-launcher.rustflags=["--cfg","cg_mutants"]' --config 'profile.dev.package.host.rustflags=["--cfg","cg_mutants"]')
cargo "${mutants[@]}" test -p host --features barrier-timeout --test barrier_timeout_shared --test branch_memory_mutant
cargo test -p cg-launcher --features barrier-timeout --test doors
# Shared<T> is Sync, and safe code may fill it on one thread while another
# reads it: Miri checks that no two host accesses race or mix atomic sizes on
# one element (it reported the byte-at-a-time fill this replaced). The test
# builds a Shared on emulator memory without a device, and the integer
# address the launcher keeps for it is exposed provenance, which Miri allows
# with this flag.
MIRIFLAGS=-Zmiri-permissive-provenance cargo miri test -p cg-launcher --lib shared_host_accesses
# The library crates as they would be published: their documentation
# complete and warning-free (each denies missing_docs), and each packaged and
# the package built on its own, path dependencies replaced by the packages.
libraries=(-p cg-kernel-macros -p cg-barrier -p cg-emulator -p cg-kernel -p cg-builder -p cg-launcher)
algorithms=(-p cg-algorithms-kernels -p cg-algorithms)
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps "${libraries[@]}" "${algorithms[@]}"
# cargo package builds each package against the others through a temporary
# registry at target/package/tmp-registry, the same registry on every run
# from this checkout. Cargo unpacks a registry crate into CARGO_HOME once and
# never again, and takes a registry crate's build as fresh by its version
# alone, so a crate changed since the last run here (or the last run on a
# machine whose CARGO_HOME is kept) would be verified against its old source:
# cg-launcher failed in CI against a cg-kernel without a field it had gained.
# Both copies go first: the unpacked sources of our crates in any unnamed
# (temporary) registry, and the fingerprints of the builds made from them
# (their dep-info names such a source), so that cargo unpacks and builds again.
for dir in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/cg-*; do
  if [[ -d $dir ]]; then rm -rf "$dir"; fi
done
for depinfo in $(grep -l "registry/src/-" target/debug/deps/cg_*.d 2>/dev/null || true); do
  unit=$(basename "$depinfo" .d)
  rm -rf "target/debug/.fingerprint/${unit//_/-}"
done
cargo package --allow-dirty "${libraries[@]}"
# The algorithms' crates are packaged but not built from their packages
# here: cg-algorithms-kernels's build script runs cargo again to make its
# PTX, and that inner cargo resolves cg-kernel from the registry, not from
# the packages this command has just made (it does not see cargo package's
# temporary registry), so the check would build against the wrong cg-kernel.
cargo package --allow-dirty --no-verify "${libraries[@]}" "${algorithms[@]}"
# Each library's public items against the listing checked in beside it
# (crates/*/public-api.txt), so that a change to a crate's API shows in review
# as a line of a diff: a diff and a non-zero exit if they differ. rustdoc's
# JSON goes to a target directory of its own, target/public-api: it is made
# with other flags than the HTML above (hidden items included, RUSTDOCFLAGS
# cleared), and sharing target/doc would rebuild one for the other each run.
cargo run -p public-api -- --check
echo "tests: all passed"

# Style, after the tests, so that it never hides a result: the layout rustfmt
# gives (rustfmt.toml) and no lint clippy raises (each lint the code keeps is
# an `allow` with its reason). A learner's correct code that a lint dislikes
# (`(n + 255) / 256` for `n.div_ceil(256)`) is reported here as a style note,
# not failed; CI sets STRICT_STYLE=1, where style fails the run.
clippy_args=(--workspace --all-targets --features host/barrier-timeout,host/traced)
if [ "${STRICT_STYLE:-0}" = 1 ]; then
  if ! cargo fmt --check || ! cargo clippy "${clippy_args[@]}" -- -D warnings; then
    echo "error: style: the code above is correct by the tests but not formatted (cargo fmt) or lint-clean (cargo clippy)" >&2
    exit 1
  fi
  echo "style: clean (cargo fmt --check, cargo clippy -D warnings)"
  exit 0
fi
echo "style: the tests passed; now rustfmt and clippy, whose findings are notes on style, not failures"
fmt_rc=0
fmt_out=$(cargo fmt --check 2>&1) || fmt_rc=$?
# Lints as warnings here (CI denies them), so that clippy reports style and
# never says it "could not compile" code that compiled and passed.
clippy_out=$(cargo clippy "${clippy_args[@]}" --color never 2>&1) || true
lints=$(grep -c '^warning: ' <<<"$clippy_out" || true)
if [ "$fmt_rc" = 0 ] && [ "$lints" = 0 ]; then
  echo "style: clean, checked just now: cargo fmt would change nothing, and cargo clippy raised no lint"
  exit 0
fi
[ "$fmt_rc" = 0 ] || { echo "$fmt_out"; echo "style note: cargo fmt would lay out the lines above differently (run cargo fmt)"; }
if [ "$lints" != 0 ]; then
  grep -v '^\s*\(Checking\|Compiling\|Finished\)' <<<"$clippy_out"
  echo "style note: cargo clippy suggests the changes above; your code is correct by the tests, and only CI (STRICT_STYLE=1) fails on style"
fi
