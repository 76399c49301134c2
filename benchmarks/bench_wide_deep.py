"""Wide & deep training throughput: `DNNLinearCombinedClassifier` on synthetic click data
with a 1,000,000-bucket hashed cross and 32-dimensional embeddings, plus peak memory.

    python benchmarks/bench_wide_deep.py [--rows N] [--batch B]
        [--blas-threads N] [--intra-op N] [--no-reference] [--profile FILE]

The default run takes 1.5-3.5 minutes on the 2-vCPU machines (25 s with
``--blas-threads 1``, see docs/canned-estimators.md, "Performance").

Data (generated in-process, fixed seed): per row a ``site`` (string, 2,000 values), an
``ad`` (string, 50,000 values), a ``user`` id (int64, 200,000 values), a ``device``
(string, 8 values), an ``hour`` (int64, 0..23) and two numeric features; clicks come from a
(site x ad) effect table plus a low-rank (user . ad) affinity, so both halves have
something to learn.

Model: linear part = hashed site, ad, vocabulary device, identity hour and
``crossed_column(["site", "ad"], 1_000_000)`` (FTRL 0.1); DNN part = 32-dimensional
``embedding_column`` of hashed site (5,000 buckets), ad (100,000) and user (200,000), a
one-hot device and the two numeric columns, hidden units (128, 64) (Adagrad 0.05). One
epoch through ``numpy_input_fn`` in batches of 512, one ``train`` call.

Lines printed (one JSON object each; the schema of benchmarks/run.py):

- ``wide_deep_train_throughput``: examples/s over the steady-state window (steps after the
  first 10% and after step 20, up to the last full batch), timed by a hook after every
  step. Reference: scikit-learn's ``SGDClassifier(loss="log_loss").partial_fit`` on a
  ``FeatureHasher(2**20)`` of the same features and the same site x ad cross, on the same
  batch, run inside the hook between flowgraph's steps (timed apart, so that the load of
  a shared machine hits both alike), hashing included -- the streaming linear learner a
  scikit-learn user would reach for. It is the *wide half only* (no embeddings, no hidden
  layers), so it is a floor on the work, not the same model.
- ``wide_deep_peak_memory``: peak RSS during training minus RSS just before it (MB;
  ``/proc/self/status`` VmHWM, reset through ``/proc/self/clear_refs``). Reference: the
  bytes of the model's variables and optimizer slots (from the checkpoint). The notes also
  give what one dense gradient of the cross and the embedding tables would take.
- ``wide_deep_holdout_auc``: AUC on 20,000 held-out rows (a sanity check that the step
  trains the model, not a race).
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import sys
import tempfile
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import rss
from run import blas_info, emit

CROSS_BUCKETS = 1_000_000
EMBED_DIM = 32
N_SITES, N_ADS, N_USERS = 2_000, 50_000, 200_000
DEVICES = ("android", "ios", "web", "tablet", "tv", "watch", "car", "other")


# -- data ---------------------------------------------------------------------------------
def make_data(n: int, seed: int) -> tuple[dict, np.ndarray]:
    """Synthetic click logs; the effect tables are fixed, the rows depend on `seed`."""
    table = np.random.RandomState(100)
    site_effect = table.normal(0.0, 1.0, N_SITES)
    ad_effect = table.normal(0.0, 1.0, N_ADS)
    user_vec = table.normal(0.0, 0.7, (N_USERS, 4))
    ad_vec = table.normal(0.0, 0.7, (N_ADS, 4))
    rng = np.random.RandomState(seed)
    # Zipf-like popularity so that the cross sees repeated (site, ad) pairs.
    site = np.minimum(rng.zipf(1.3, n) - 1, N_SITES - 1)
    ad = np.minimum(rng.zipf(1.2, n) - 1, N_ADS - 1)
    user = rng.randint(N_USERS, size=n)
    device = rng.randint(len(DEVICES), size=n)
    hour = rng.randint(24, size=n)
    price = rng.lognormal(0.0, 1.0, n).astype(np.float32)
    age = rng.uniform(18, 80, n).astype(np.float32)
    pair = (site * 7919 + ad * 104729) % 4099
    pair_effect = np.random.RandomState(101).normal(0.0, 1.0, 4099)[pair]
    logit = (0.5 * site_effect[site] + 0.5 * ad_effect[ad] + pair_effect
             + np.sum(user_vec[user] * ad_vec[ad], axis=1) - 1.0)
    click = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int64)
    site_names = np.array([f"site{i}" for i in range(N_SITES)], dtype=object)
    ad_names = np.array([f"ad{i}" for i in range(N_ADS)], dtype=object)
    features = {
        "site": site_names[site], "ad": ad_names[ad], "user": user.astype(np.int64),
        "device": np.array(DEVICES, dtype=object)[device], "hour": hour.astype(np.int64),
        "price": np.log1p(price), "age": (age - 49.0) / 18.0,
    }
    return features, click


def feature_columns():
    from flowgraph import feature_column as fc

    site = fc.categorical_column_with_hash_bucket("site", 5_000)
    ad = fc.categorical_column_with_hash_bucket("ad", 100_000)
    user = fc.categorical_column_with_hash_bucket("user", 200_000, dtype="int64")
    device = fc.categorical_column_with_vocabulary_list("device", list(DEVICES))
    hour = fc.categorical_column_with_identity("hour", 24)
    numeric = [fc.numeric_column("price"), fc.numeric_column("age")]
    wide = [site, ad, device, hour, fc.crossed_column(["site", "ad"], CROSS_BUCKETS)]
    deep = [fc.embedding_column(site, EMBED_DIM), fc.embedding_column(ad, EMBED_DIM),
            fc.embedding_column(user, EMBED_DIM), fc.indicator_column(device), *numeric]
    return wide, deep


# -- memory -------------------------------------------------------------------------------
def _maxrss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


# -- flowgraph ----------------------------------------------------------------------------
class _StepTimes:
    """A hook timing every training step; between steps it may run the reference on the
    same batch (timed separately and excluded from flowgraph's step time), so that the
    load of a shared machine hits both alike."""

    def __new__(cls, reference=None):
        from flowgraph.train.session_run_hook import SessionRunHook

        class Hook(SessionRunHook):
            def __init__(self):
                self.flowgraph, self.reference, self.rss = [], [], []
                self.created_rss = None
                self._last = None

            def after_create_session(self, session, coord):
                self.created_rss = rss.status_kb("VmRSS")
                self._last = time.perf_counter()

            def after_run(self, run_context, run_values):
                now = time.perf_counter()
                self.flowgraph.append(now - self._last)
                if len(self.flowgraph) % 100 == 0:
                    self.rss.append(rss.status_kb("VmRSS"))
                if reference is not None:
                    reference(len(self.flowgraph) - 1)
                    after = time.perf_counter()
                    self.reference.append(after - now)
                    now = after
                self._last = now

        return Hook()


def train_flowgraph(features, labels, batch, model_dir, reference=None, profile=None,
                    intra_op=0):
    from flowgraph import ConfigProto
    from flowgraph.estimators import canned
    from flowgraph.estimators.inputs import numpy_input_fn
    from flowgraph.estimators.run_config import RunConfig
    from flowgraph.train import AdagradOptimizer, FtrlOptimizer

    wide, deep = feature_columns()
    est = canned.DNNLinearCombinedClassifier(
        linear_feature_columns=wide, linear_optimizer=lambda: FtrlOptimizer(0.1),
        dnn_feature_columns=deep, dnn_optimizer=lambda: AdagradOptimizer(0.05),
        dnn_hidden_units=[128, 64], model_dir=model_dir,
        config=RunConfig(tf_random_seed=0, save_summary_steps=None,
                         log_step_count_steps=None, save_checkpoints_secs=10_000,
                         session_config=ConfigProto(intra_op_parallelism_threads=intra_op)))
    hook = _StepTimes(reference)
    input_fn = numpy_input_fn(features, labels, batch_size=batch, num_epochs=1, shuffle=False)
    rss0 = rss.status_kb("VmRSS")
    reset = rss.reset_peak_rss()
    maxrss0 = _maxrss_kb()
    t0 = time.perf_counter()
    if profile:
        import cProfile

        cProfile.runctx("est.train(input_fn, hooks=[hook])", globals(), locals(), profile)
    else:
        est.train(input_fn, hooks=[hook])
    total = time.perf_counter() - t0 - sum(hook.reference)
    peak = rss.status_kb("VmHWM") if reset else None
    return est, hook, {"rss0_kb": rss0, "peak_kb": peak, "maxrss0_kb": maxrss0,
                       "maxrss1_kb": _maxrss_kb(), "total_s": total}


def steady_window(n_rows, batch):
    """The steps timed: after the first 10% (at least 20), up to the last full batch (the
    final partial batch is excluded)."""
    full = n_rows // batch
    start = max(20, full // 10)
    if full - start < 10:
        start = min(1, full - 1)
    return start, full


def throughput(durations, batch, window):
    lo, hi = window
    return (hi - lo) * batch / sum(durations[lo:hi])


def variable_bytes(model_dir):
    from flowgraph.train import checkpoint_utils

    return sum(int(np.prod(shape)) * 4 for _, shape in
               checkpoint_utils.list_variables(model_dir))


# -- reference: scikit-learn's streaming linear learner on hashed features ----------------
def _tokens(features, lo, hi):
    site, ad = features["site"][lo:hi], features["ad"][lo:hi]
    user, device, hour = features["user"][lo:hi], features["device"][lo:hi], features[
        "hour"][lo:hi]
    return [[f"s={s}", f"a={a}", f"sxa={s}|{a}", f"u={u}", f"d={d}", f"h={h}"]
            for s, a, u, d, h in zip(site, ad, user, device, hour, strict=True)]


class SklearnReference:
    """``SGDClassifier(loss="log_loss").partial_fit`` on ``FeatureHasher(2**20)`` tokens of
    the same features and the same site x ad cross, one call per flowgraph batch."""

    def __init__(self, features, labels, batch):
        from sklearn.feature_extraction import FeatureHasher
        from sklearn.linear_model import SGDClassifier

        self.features, self.labels, self.batch = features, labels, batch
        self.hasher = FeatureHasher(n_features=2 ** 20, input_type="string",
                                    alternate_sign=False)
        self.model = SGDClassifier(loss="log_loss", alpha=1e-6, random_state=0)
        self.hash_s = 0.0

    def __call__(self, step: int) -> None:
        lo = step * self.batch
        hi = min(len(self.labels), lo + self.batch)
        if lo >= hi:
            return
        t0 = time.perf_counter()
        X = self.hasher.transform(_tokens(self.features, lo, hi))
        self.hash_s += time.perf_counter() - t0
        self.model.partial_fit(X, self.labels[lo:hi], classes=np.array([0, 1]))

    def predict_proba(self, features, n):
        return self.model.predict_proba(self.hasher.transform(_tokens(features, 0, n)))[:, 1]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--no-reference", action="store_true",
                        help="skip the scikit-learn reference")
    parser.add_argument("--blas-threads", type=int, default=None, metavar="N",
                        help="limit BLAS to N threads (threadpoolctl) for the whole run")
    parser.add_argument("--intra-op", type=int, default=0, metavar="N",
                        help="RunConfig(session_config=ConfigProto("
                             "intra_op_parallelism_threads=N)): N BLAS threads during "
                             "flowgraph's runs only")
    parser.add_argument("--profile", metavar="FILE",
                        help="write a cProfile of the flowgraph train call to FILE")
    args = parser.parse_args(argv)
    logging.getLogger("tensorflow").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore")
    from sklearn.metrics import roc_auc_score

    from flowgraph.backends.cpu import kernels_math  # noqa: F401  (loads its BLAS)
    from flowgraph.estimators.inputs import numpy_input_fn

    if args.blas_threads:  # after every BLAS library is loaded (flowgraph's and SciPy's)
        from threadpoolctl import threadpool_limits

        threadpool_limits(args.blas_threads, user_api="blas")
    blas = blas_info()

    t = time.perf_counter()
    features, labels = make_data(args.rows, seed=0)
    test_x, test_y = make_data(20_000, seed=1)
    gen_s = time.perf_counter() - t
    reference = None if args.no_reference else SklearnReference(features, labels, args.batch)

    with tempfile.TemporaryDirectory() as model_dir:
        est, hook, mem = train_flowgraph(features, labels, args.batch, model_dir, reference,
                                         args.profile, args.intra_op)
        var_bytes = variable_bytes(model_dir)
        batches = est.predict(numpy_input_fn(test_x, batch_size=4096, shuffle=False),
                              predict_keys=["logistic"], yield_single_examples=False)
        p = np.concatenate([b["logistic"] for b in batches]).ravel()

    window = steady_window(args.rows, args.batch)
    fg = throughput(hook.flowgraph, args.batch, window)
    ref = None if reference is None else throughput(hook.reference, args.batch, window)
    emit("wide_deep_train_throughput", "examples/s", fg, ref, "report", None, [
        f"{args.rows} rows, batch {args.batch}, {len(hook.flowgraph)} steps; steady window "
        f"= steps {window[0]}..{window[1]}",
        f"whole train call {args.rows / mem['total_s']:.0f} examples/s "
        f"({mem['total_s']:.1f} s incl. graph build, initial and final checkpoint)",
        "reference = sklearn SGDClassifier(log_loss).partial_fit on FeatureHasher(2**20) "
        "tokens of the same features and site x ad cross, same batches, run between "
        "flowgraph's steps; hashing included"
        + ("" if reference is None else f" ({reference.hash_s:.1f} s of it)")
        + "; it is the wide half only (no embeddings, no DNN)",
        f"data generation {gen_s:.1f} s (not timed)",
        f"intra_op_parallelism_threads={args.intra_op}",
    ], blas)
    delta_mb = None if mem["peak_kb"] is None else (mem["peak_kb"] - mem["rss0_kb"]) / 1024
    dense_grad_mb = (CROSS_BUCKETS + (5_000 + 100_000 + 200_000) * EMBED_DIM) * 4 / 2 ** 20
    emit("wide_deep_peak_memory", "MB", delta_mb, var_bytes / 2 ** 20, "report", None, [
        "flowgraph = peak RSS during train (VmHWM reset via clear_refs) minus RSS before it",
        "reference = bytes of the variables and optimizer slots (checkpoint)",
        f"RSS before train {mem['rss0_kb'] / 1024:.0f} MB, after session creation "
        f"{hook.created_rss / 1024:.0f} MB; ru_maxrss {mem['maxrss0_kb'] / 1024:.0f} -> "
        f"{mem['maxrss1_kb'] / 1024:.0f} MB",
        "RSS every 100 steps (MB): " + ",".join(
            f"{r / 1024:.0f}" for r in hook.rss[:: max(1, len(hook.rss) // 10)]),
        f"one dense float32 gradient of the cross weights and the three embedding tables "
        f"would be {dense_grad_mb:.1f} MB per step (gradients here are sparse)",
    ], blas)
    ref_auc = None
    if reference is not None:
        ref_auc = float(roc_auc_score(test_y, reference.predict_proba(test_x, len(test_y))))
    emit("wide_deep_holdout_auc", "AUC", float(roc_auc_score(test_y, p)), ref_auc, "report",
         None, ["20,000 held-out rows after one epoch; reference = the SGDClassifier above"],
         blas)


if __name__ == "__main__":
    main()
