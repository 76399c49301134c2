#!/usr/bin/env bash
# The CPU figures on a many-core machine (issues 14 and 17): the MLP step against its GEMM
# floor and PyTorch (when installed), the engine workloads, convolutions, distributed
# training on loopback and the Estimator harness. Builds flowgraph in place when it does
# not import (after benchmarks/gpu_check.sh on the same machine it does). Results go to
# $OUT (or ./cores-out): every suite's lines in cores.jsonl (a device run returns at most
# eight files).
#   usage: [SUITES="mlp engine"] bash benchmarks/cores_check.sh
# (suites: threads pieces mlp engine conv distributed estimator; the default leaves out
# none but "pieces": threads first, since its figures say how to read the others)
set -u
out=${OUT:-cores-out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1
python3 -c "import flowgraph" 2>/dev/null || python3 -m pip install --no-build-isolation \
  --no-deps --no-index -e . > "$out/build-cpu.log" 2>&1 || { tail -20 "$out/build-cpu.log"; exit 1; }
nproc; lscpu | grep -E "Model name|^CPU\(s\)"
suite() {  # name seconds command...
  local name=$1 limit=$2; shift 2
  case " ${SUITES:-threads mlp engine conv distributed estimator} " in *" $name "*) ;; *) return;; esac
  echo "== $name"; timeout "$limit" "$@" 2>&1 | tee -a "$out/cores.jsonl"
}
suite threads ${THREADS_TIMEOUT:-90} python3 benchmarks/small_loop_threads.py --steps 1000 --profile
suite pieces ${PIECES_TIMEOUT:-90} python3 benchmarks/bench_mlp.py --pieces mlp_sgd_feed
suite mlp ${MLP_TIMEOUT:-110} python3 benchmarks/bench_mlp.py mlp_sgd_feed mlp_adam_feed
suite engine ${ENGINE_TIMEOUT:-80} python3 benchmarks/run.py
suite conv ${CONV_TIMEOUT:-60} python3 benchmarks/bench_conv.py --rounds 2
suite distributed ${DIST_TIMEOUT:-120} python3 benchmarks/bench_distributed.py \
  --only ${DIST_ONLY:-small,heavy,sync,estimator}
suite estimator ${EST_TIMEOUT:-60} python3 benchmarks/bench_estimator.py --repeats 1
