#!/usr/bin/env bash
# The checks that need a GPU, as one script for a short lease on a CUDA machine:
#   bash benchmarks/gpu_check.sh [OUTDIR]
# Runs the CUDA test tier, the engine's CPU verification suite under that machine's torch,
# and the GPU benchmarks; every log lands in OUTDIR.
set -u
out=${1:-${OUT:-/tmp/atlas-gpu}}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
py=${PYTHON:-python3}
status=0

section() {  # name, timeout in s, command...
    local name=$1 limit=$2
    shift 2
    echo "=== $name"
    local t0=$SECONDS
    timeout "$limit" "$@" >"$out/$name.log" 2>&1
    local rc=$?
    echo "    rc=$rc in $((SECONDS - t0)) s"
    tail -n 25 "$out/$name.log"
    [ "$rc" -eq 0 ] || status=1
}

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
$py -c 'import torch, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available(), "transformers", transformers.__version__)'

section cuda_tests 240 $py -m pytest -q -p no:cacheprovider -m cuda tests/engine/test_cuda.py
section cpu_engine_tests 240 $py -m pytest -q -p no:cacheprovider -x \
    tests/engine/test_model_cuda_graph.py tests/engine/test_model_hf_oracle.py \
    tests/engine/test_verify_random_workloads.py tests/engine/test_model_paged_attention.py
section engine_bench_cuda 240 $py benchmarks/engine_bench.py --device cuda --json "$out/engine_bench_cuda.json"
section qwen3_checkpoint_cuda 240 $py benchmarks/qwen3_checkpoint_check.py --device cuda --out "$out/qwen3_checkpoint_cuda.json"
exit $status
