#!/usr/bin/env bash
# The OpenCL checks on a machine with an NVIDIA GPU (see ../shared/device/OPENCL.md):
# pyopencl from carried wheels, the driver's OpenCL library through an ICD file of our own,
# flowgraph built in place, then the GEMM sweep, the OpenCL test modules (CI=true: no
# skipping) and bench_opencl.py. Results go to $OUT (or ./gpu-out).
#   usage: [SKIP_SWEEP=1] [SWEEP_SIZES=...] [BENCH=workloads] \
#          bash benchmarks/gpu_check.sh WHEEL_DIR [pytest args...]
set -u
wheels=$1; shift
out=${OUT:-gpu-out}; mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site "$wheels"/*.whl || exit 1
# the tuning cache outside $out (only 8 files come back from a device run); packed at the end
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 FLOWGRAPH_CACHE_DIR=/tmp/fg-cache
mkdir -p /tmp/icd && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
# an editable install: the backends are found through entry points
python3 -m pip install --no-build-isolation --no-deps --no-index -e . > "$out/build.log" 2>&1 \
  || { tail -20 "$out/build.log"; exit 1; }
nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "from flowgraph.backends.opencl._runtime import discover; print([(r.name, r.platform, r.is_gpu) for r in discover()])"
[ -n "${SKIP_SWEEP:-}" ] || { echo "== sweep"; timeout 100 python3 benchmarks/opencl_gemm_sweep.py ${SWEEP_SIZES:-} 2>&1 | tee "$out/sweep.jsonl"; }
[ $# -eq 0 ] && set -- tests/backends tests/runtime/test_cost_placement.py
echo "== tests"; CI=true timeout ${TEST_TIMEOUT:-200} python3 -m pytest -q -rfE -p no:cacheprovider "$@" 2>&1 \
  | tee "$out/tests.log" | tail -25
echo "== bench"; timeout ${BENCH_TIMEOUT:-150} python3 benchmarks/bench_opencl.py ${BENCH:-} 2>&1 \
  | tee "$out/bench.jsonl"
tar -czf "$out/cache.tgz" -C /tmp fg-cache 2>/dev/null
