#!/usr/bin/env bash
# Runs on a machine with two or more GPUs, from the repo root, with binaries
# staged in .device/ by scripts/stage-gpu-run.sh: the sum across GPUs as a
# user runs it (with and without NCCL found), its GPU tests, its mistakes,
# and NCCL with one process per GPU. Logs go to $OUT.
set -u
OUT=${OUT:-multi-results}
mkdir -p "$OUT"
D=.device
B="$D/cg-lesson"
# No step may hold the machine for long, whatever goes wrong.
T="timeout 150"
# NVLink multicast stays off (the program also sets this unless it is set).
export NCCL_NVLS_ENABLE=0
{
  date -u +"date: %Y-%m-%dT%H:%MZ"
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
  nvidia-smi topo -m
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

# Which NCCL the loader finds by itself, if any.
{ ldconfig -p | grep -i nccl; echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"; } > "$OUT/nccl-found.txt" 2>&1

# NCCL from the nvidia-nccl wheel, linked as libnccl.so (cudarc's name for it).
so=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
mkdir -p /tmp/nccl-link && ln -sf "$so" /tmp/nccl-link/libnccl.so
export LD_LIBRARY_PATH=/tmp/nccl-link:${LD_LIBRARY_PATH:-}
echo "NCCL: $so"

$T "$B" multi-gpu > "$OUT/multi-gpu.txt" 2>&1; echo "rc=$?" >> "$OUT/multi-gpu.txt"
$T "$B" multi-gpu --json --max-log2 36 > "$OUT/multi-gpu.json" 2> "$OUT/multi-gpu-json.err"; echo "json rc=$?"
cat "$OUT/multi-gpu.txt"

{
  for args in "--n 0 --no-sweep" "--n 1 --no-sweep" "--n 7 --no-sweep" "--gpus 1 --no-sweep" "--gpus 3" "--never-launch 1 --no-nccl --no-sweep" "--n 4294967296 --no-sweep --runs 3"; do
    echo "=== cg-lesson multi-gpu $args"
    $T "$B" multi-gpu $args 2>&1 | grep -E "^only|GPU . total|combined|passed|FAILED|error|Timing|one GPU, one|\(a\)|\(b\)"; echo "rc=${PIPESTATUS[0]}"
  done
} > "$OUT/variants.txt"
cat "$OUT/variants.txt"

# Path (a) in CUDA C++ (host/cpp/multi_gpu.cu), built by nvcc, against the Rust at the same sizes.
{
  nvcc -O3 -std=c++17 -arch=sm_90 host/cpp/multi_gpu.cu -o /tmp/multi_gpu_cpp 2>&1 && for n in 1048576 4194915 4294967296; do
    echo "=== C++ $n"; $T /tmp/multi_gpu_cpp $n 2 2>&1
    echo "=== Rust $n"; $T "$B" multi-gpu --n $n --no-sweep --no-nccl 2>&1 | grep -E "\(a\) grid|one GPU, one|checks"
  done
} > "$OUT/cpp.txt"
cat "$OUT/cpp.txt"

# One process per GPU, as NCCL runs across hosts.
rm -f /tmp/nccl.id
$T "$B" multi-gpu --rank 0 --ranks 2 --nccl-id /tmp/nccl.id --device 0 > "$OUT/rank0.txt" 2>&1 &
p0=$!
$T "$B" multi-gpu --rank 1 --ranks 2 --nccl-id /tmp/nccl.id --device 1 > "$OUT/rank1.txt" 2>&1; echo "rank 1 rc=$?" >> "$OUT/rank1.txt"
wait $p0; echo "rank 0 rc=$?" >> "$OUT/rank0.txt"
cat "$OUT/rank0.txt" "$OUT/rank1.txt"

for t in multi_gpu multi_gpu_stranded ${GPU_TESTS:-}; do
  echo "=== $t"
  $T "$D/tests/$t" --include-ignored --test-threads=1 --nocapture 2>&1
done > "$OUT/tests.txt"
grep -E "^test |^test result|FAILED|panicked" "$OUT/tests.txt"
$T "$B" > "$OUT/lesson.txt" 2>&1; echo "lesson rc=$?" >> "$OUT/lesson.txt"
tail -3 "$OUT/lesson.txt"
