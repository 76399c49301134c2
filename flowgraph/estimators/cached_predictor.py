"""`Estimator.cached_predictor`: one PREDICT graph and session kept alive across calls.

`Estimator.predict` builds a graph, calls the input_fn and model_fn and reads the
checkpoint on every call, which is right for scoring a data set and far too slow for
answering one request at a time. A `CachedPredictor` does that work once:

    build (once)                       per call
    ------------                       --------
    receiver placeholders              check features -> feed
    model_fn(mode=PREDICT)             stat(model_dir/checkpoint)   ~1 us
    restore latest checkpoint          session.run(predictions)
    run local init, warm the plan

The graph is the one `export_saved_model` writes (`export_impl.build_predict_graph`),
so a cached predictor and an exported model answer alike.

State and invariant. The predictor holds one *snapshot*: a session of the graph with
one checkpoint's values restored. Each call takes the current snapshot and runs in it,
counting itself in flight. When the checkpoint state file of `model_dir` changes (its
inode, size or mtime; a checkpoint save replaces it atomically) and names a newer
checkpoint, the calling thread restores that checkpoint into a *new* session, runs it
once so its plan is compiled, and then swaps it in. Calls already running finish on
the old snapshot, whose session is closed by the last of them. So every call sees the
weights of exactly one checkpoint, never a mix, and no call waits for a reload. Only
one thread reloads at a time; the others keep serving the current snapshot.

Example
-------
>>> import numpy as np, flowgraph as tf
>>> def model_fn(features, labels, mode):
...     w = tf.get_variable("w", [2, 1], initializer=tf.ones_initializer())
...     y = tf.matmul(features["x"], w)
...     if mode == tf.estimator.ModeKeys.PREDICT:
...         return tf.estimator.EstimatorSpec(mode, predictions={"y": y})
...     loss = tf.reduce_mean(tf.square(y - labels))
...     train_op = tf.assign_add(tf.train.get_global_step(), 1)
...     return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
>>> est = tf.estimator.Estimator(model_fn)
>>> _ = est.train(lambda: ({"x": tf.ones([4, 2])}, tf.ones([4, 1])), steps=1)
>>> with est.cached_predictor({"x": tf.io.FixedLenFeature([2], tf.float32)}) as p:
...     print(p.predict({"x": [[1.0, 2.0]]})["y"].tolist(), p.predict_one({"x": [3.0, 4.0]}))
[[3.0]] {'y': array([7.], dtype=float32)}
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from flowgraph.estimators import export_impl
from flowgraph.estimators.estimator_eval import _select_predictions
from flowgraph.estimators.run_config import session_config_for

__all__ = ["CachedPredictor"]

logger = logging.getLogger("tensorflow")

_SINGLE = "input"  # the receiver key of a model whose features are one Tensor


# -- the receiver built from a feature spec ------------------------------------------------------
def _spec_dtype_and_shape(key: str, spec) -> tuple[Any, list | None]:
    """(dtype, per-example shape or None for unknown rank) of one feature spec entry."""
    from flowgraph.framework import dtypes
    from flowgraph.framework.operation import Tensor
    from flowgraph.ops import parsing_ops

    if isinstance(spec, parsing_ops.FixedLenFeature):
        return dtypes.as_dtype(spec.dtype).base_dtype, list(spec.shape)
    if isinstance(spec, Tensor):
        shape = spec.shape
        return spec.dtype.base_dtype, None if shape.ndims is None else shape.as_list()[1:]
    if isinstance(spec, (parsing_ops.VarLenFeature, parsing_ops.FixedLenSequenceFeature)):
        raise ValueError(
            f"Feature '{key}' is a {type(spec).__name__}, which cannot be fed as a dense "
            "array. Feed serialized tf.train.Example protos instead: pass "
            "serving_input_receiver_fn=tf.estimator.export."
            "build_parsing_serving_input_receiver_fn(feature_spec).")
    if isinstance(spec, np.ndarray) or isinstance(spec, (list, tuple)):
        arr = np.asarray(spec)
        if arr.ndim == 0:
            raise ValueError(f"Feature '{key}': an example array needs a batch dimension; "
                             f"got a scalar {arr!r}.")
        dtype = (dtypes.string if arr.dtype.kind in "OUS"
                 else dtypes.as_dtype(arr.dtype).base_dtype)
        return dtype, list(arr.shape[1:])
    raise TypeError(
        f"Feature '{key}': cannot make an input from {type(spec).__name__} {spec!r:.60}. "
        "Give a tf.io.FixedLenFeature (e.g. from tf.feature_column.make_parse_example_spec), "
        "a Tensor or placeholder, or an array of example rows.")


def receiver_fn_from_spec(feature_spec) -> Callable:
    """A serving input receiver fn with one placeholder per feature of `feature_spec`.

    `feature_spec` maps feature names to a `tf.io.FixedLenFeature`, a Tensor (its dtype
    and shape after the batch dimension) or an array of example rows (its dtype and the
    shape of one row); the placeholders have shape ``[None, *shape]`` and are both the
    receiver tensors and the features. A single spec (not a dict) gives the model_fn one
    Tensor, as ``numpy_input_fn(x)`` does for an array `x`.

    Example
    -------
    >>> import flowgraph as tf
    >>> fn = receiver_fn_from_spec({"x": tf.io.FixedLenFeature([3], tf.float32)})
    >>> with tf.Graph().as_default():
    ...     print(fn().features["x"].shape.as_list())
    [None, 3]
    """
    from flowgraph.estimators.export import ServingInputReceiver, TensorServingInputReceiver

    if isinstance(feature_spec, Mapping):
        if not feature_spec:
            raise ValueError("feature_spec is empty; name at least one feature.")
        entries = {str(k): _spec_dtype_and_shape(str(k), v) for k, v in feature_spec.items()}
    else:
        entries = {_SINGLE: _spec_dtype_and_shape("features", feature_spec)}

    def serving_input_receiver_fn():
        from flowgraph.ops.array_ops import placeholder

        tensors = {key: placeholder(dtype, None if shape is None else [None, *shape],
                                    name=key if key.isidentifier() else "feature")
                   for key, (dtype, shape) in entries.items()}
        if not isinstance(feature_spec, Mapping):
            return TensorServingInputReceiver(tensors[_SINGLE], tensors)
        return ServingInputReceiver(tensors, tensors)

    return serving_input_receiver_fn


# -- one session holding one checkpoint ----------------------------------------------------------
class _Snapshot:
    __slots__ = ("checkpoint_path", "closing", "global_step", "inflight", "retired",
                 "session")

    def __init__(self, session, checkpoint_path: str, global_step: int) -> None:
        self.session = session
        self.checkpoint_path = checkpoint_path
        self.global_step = global_step
        self.inflight = 0
        self.retired = False   # no longer the current snapshot
        self.closing = False   # its session is being closed (by exactly one thread)

    def should_close(self) -> bool:
        """With the predictor's lock held: whether the caller is the one to close the
        session (retired, nothing in flight, and nobody closed it yet)."""
        if self.retired and self.inflight == 0 and not self.closing:
            self.closing = True
            return True
        return False


class _Input:
    """How one receiver tensor is fed: its tensor, dtype and shape for the checks."""

    __slots__ = ("dims", "info", "key", "np_dtype", "rest", "tensor")

    def __init__(self, key: str, tensor) -> None:
        from flowgraph.saved_model.signature_def_utils import build_tensor_info

        self.key = key
        self.tensor = tensor
        self.info = build_tensor_info(tensor)
        dtype = tensor.dtype.base_dtype
        self.np_dtype = None if dtype.name == "string" else np.dtype(dtype.as_numpy_dtype)
        shape = tensor.shape
        self.dims = None if shape.ndims is None else tuple(shape.as_list())
        # the shape after an unknown batch dimension, when that is all there is to check
        self.rest = (self.dims[1:] if self.dims and self.dims[0] is None
                     and None not in self.dims[1:] else None)

    def fits(self, value) -> bool:
        """Whether `value` can be fed as is (the fast path of a well-formed request)."""
        if type(value) is not np.ndarray or value.dtype != self.np_dtype:
            return False
        rest = self.rest
        if rest is not None:
            return value.ndim == len(rest) + 1 and value.shape[1:] == rest
        dims = self.dims
        if dims is None:
            return True
        shape = value.shape
        return len(shape) == len(dims) and all(d is None or d == s
                                               for d, s in zip(dims, shape))

    def convert(self, value) -> np.ndarray:
        from flowgraph.saved_model.predictor import convert_input

        return convert_input(value, self.info, f"Feature '{self.key}'")


class CachedPredictor:
    """Low-latency predictions from an Estimator's latest checkpoint (see the module
    docstring); made by `Estimator.cached_predictor`.

    Parameters
    ----------
    estimator : Estimator
        Any Estimator: a custom model_fn or a canned one.
    feature_spec : dict or FixedLenFeature or Tensor or array, optional
        The features the model_fn receives (see `receiver_fn_from_spec`).
    serving_input_receiver_fn : callable, optional
        Instead of `feature_spec`: a receiver fn as for `export_saved_model`; then
        `predict` takes its receiver tensors (e.g. ``{"examples": serialized}``).
    predict_keys : str or list of str, optional
        The predictions to compute (default: all).
    checkpoint_path : str, optional
        Serve this checkpoint and never reload (default: the latest in model_dir,
        reloaded when a newer one appears).
    reload : bool, default True
        Whether to pick up newer checkpoints of model_dir.

    Example
    -------
    >>> import flowgraph as tf               # doctest: +SKIP
    >>> p = estimator.cached_predictor(tf.feature_column.make_parse_example_spec(columns))
    ...                                      # doctest: +SKIP
    >>> p.predict({"x": x_batch})["probabilities"]   # doctest: +SKIP
    """

    def __init__(self, estimator, feature_spec=None, *, serving_input_receiver_fn=None,
                 predict_keys: str | list[str] | None = None,
                 checkpoint_path: str | os.PathLike | None = None,
                 reload: bool = True) -> None:
        from flowgraph.train import checkpoint_state

        if (feature_spec is None) == (serving_input_receiver_fn is None):
            raise ValueError(
                "cached_predictor needs to know the model's inputs: give either a "
                "feature_spec (e.g. {'x': tf.io.FixedLenFeature([4], tf.float32)}, or "
                "tf.feature_column.make_parse_example_spec(feature_columns)) or a "
                "serving_input_receiver_fn" + (", not both." if feature_spec is not None
                                               else "."))
        self._estimator = estimator
        self._model_dir = estimator.model_dir
        if checkpoint_path is not None:
            checkpoint_path = os.fsdecode(os.fspath(checkpoint_path))
            if not checkpoint_state.checkpoint_exists(checkpoint_path):
                raise ValueError(f"checkpoint_path {checkpoint_path} does not exist.")
            self._watch = False
        else:
            checkpoint_path = estimator.latest_checkpoint()
            if not checkpoint_path:
                raise ValueError(
                    f"Could not find trained model in model_dir: {self._model_dir}. The "
                    "cached predictor serves the latest checkpoint there: train the "
                    "estimator first (estimator.train(input_fn, steps=...)), or pass "
                    "checkpoint_path.")
            self._watch = bool(reload)
        self._state_file = checkpoint_state._state_path(self._model_dir, None)
        self._state_sig = self._stat_state() if self._watch else None

        receiver_fn = serving_input_receiver_fn or receiver_fn_from_spec(feature_spec)
        pg = export_impl.build_predict_graph(estimator, receiver_fn)
        self._graph = pg.graph
        self._pg = pg
        predictions = _select_predictions(pg.spec.predictions, predict_keys)
        self._single_output = not isinstance(predictions, dict)
        self._fetches = predictions if self._single_output else dict(predictions)
        self._inputs = {key: _Input(key, t)
                        for key, t in pg.receiver.receiver_tensors.items()}
        self._only = next(iter(self._inputs.values())) if len(self._inputs) == 1 else None
        self._graph.finalize()

        self._cond = threading.Condition()
        self._reload_lock = threading.Lock()
        self._closed = False
        self._last_feed: dict | None = None
        self._snapshot = self._load(checkpoint_path, self._warmup_feed())

    # -- properties ---------------------------------------------------------------------------
    @property
    def checkpoint_path(self) -> str:
        """The checkpoint whose values the predictions use now."""
        return self._snapshot.checkpoint_path

    @property
    def global_step(self) -> int:
        """The global step of that checkpoint."""
        return self._snapshot.global_step

    @property
    def input_keys(self) -> list[str]:
        """The keys `predict` takes (the receiver tensors)."""
        return sorted(self._inputs)

    @property
    def graph(self):
        """The (finalized) PREDICT graph."""
        return self._graph

    # -- predictions --------------------------------------------------------------------------
    def predict(self, features) -> dict[str, np.ndarray] | np.ndarray:
        """Predictions for a batch of examples.

        Parameters
        ----------
        features : dict or array-like
            Input key -> array whose first dimension is the batch; a bare array when the
            model has a single input.

        Returns
        -------
        dict of np.ndarray
            Prediction key -> array with the batch first; the array itself when the
            model_fn's predictions are a single Tensor (as `Estimator.predict` yields).

        Raises
        ------
        ValueError
            A feature is missing or unknown, or its shape or dtype does not fit.
        RuntimeError
            The predictor is closed.

        Example
        -------
        >>> predictor.predict({"x": [[1.0, 2.0], [3.0, 4.0]]})["y"].shape  # doctest: +SKIP
        (2, 1)
        """
        feed = self._feed(features)
        if self._watch:
            self._maybe_reload()
        cond = self._cond
        with cond:
            if self._closed:
                raise RuntimeError(f"{self!r} is closed.")
            snap = self._snapshot
            snap.inflight += 1
        try:
            out = snap.session.run(self._fetches, feed)
        finally:
            with cond:
                snap.inflight -= 1
                if snap.inflight == 0:
                    cond.notify_all()
                close = snap.should_close()
            if close:
                snap.session.close()
        self._last_feed = feed
        return out

    def predict_one(self, example) -> dict[str, np.ndarray] | np.ndarray:
        """Predictions for one example: `predict` of a batch of one, unbatched.

        Parameters
        ----------
        example : dict or array-like
            Input key -> value of one example (no batch dimension); a bare value when
            the model has a single input.

        Returns
        -------
        dict of np.ndarray
            Prediction key -> the example's value (or the value itself for a single
            Tensor of predictions).

        Example
        -------
        >>> predictor.predict_one({"x": [1.0, 2.0]})["y"]   # doctest: +SKIP
        array([3.], dtype=float32)
        """
        if isinstance(example, Mapping):
            batch = {k: np.asarray(v)[None] for k, v in example.items()}
        else:
            batch = np.asarray(example)[None]
        out = self.predict(batch)
        try:
            if self._single_output:
                return out[0]
            return {k: v[0] for k, v in out.items()}
        except IndexError:
            raise ValueError(
                "predict_one needs every prediction to have a batch dimension; the model's "
                "predictions include a scalar. Use predict() instead.") from None

    __call__ = predict

    def _feed(self, features) -> dict:
        inputs = self._inputs
        if not isinstance(features, Mapping):
            only = self._only
            if only is None:
                raise ValueError(
                    f"The model has inputs {sorted(inputs)}; pass a dict of them, not a "
                    f"{type(features).__name__}.")
            return {only.tensor: features if only.fits(features) else only.convert(features)}
        if len(features) != len(inputs) or any(k not in inputs for k in features):
            missing = sorted(k for k in inputs if k not in features)
            unknown = sorted(str(k) for k in features if k not in inputs)
            parts = []
            if missing:
                parts.append(f"missing feature(s) {missing}")
            if unknown:
                parts.append(f"unknown feature(s) {unknown}")
            message = " and ".join(parts)
            raise ValueError(f"{message[0].upper()}{message[1:]}: the model's inputs are "
                             f"{sorted(inputs)}.")
        feed = {}
        for key, value in features.items():
            inp = inputs[key]
            feed[inp.tensor] = value if inp.fits(value) else inp.convert(value)
        return feed

    # -- loading and reloading ----------------------------------------------------------------
    def _warmup_feed(self) -> dict | None:
        """Zeros of batch size 1 for every input, or None when a shape is not known."""
        feed = {}
        for inp in self._inputs.values():
            if inp.dims is None or inp.np_dtype is None or None in inp.dims[1:]:
                return None
            shape = tuple(1 if d is None else d for d in inp.dims)
            feed[inp.tensor] = np.zeros(shape, dtype=inp.np_dtype)
        return feed

    def _load(self, checkpoint_path: str, warmup_feed: dict | None) -> _Snapshot:
        from flowgraph.runtime.session import Session

        pg = self._pg
        session = Session(graph=self._graph, config=session_config_for(self._estimator.config))
        try:
            export_impl.restore_checkpoint(session, pg.saver, checkpoint_path,
                                           "loading the cached predictor")
            session.run(pg.local_init_op)
            step = int(session.run(pg.global_step))
            if warmup_feed is not None:
                try:  # compile the plan now, not in the first request
                    session.run(self._fetches, warmup_feed)
                except Exception as e:
                    logger.debug("cached predictor: warm-up run failed (%s)", e)
        except BaseException:
            session.close()
            raise
        logger.info("Cached predictor loaded %s (global step %d).", checkpoint_path, step)
        return _Snapshot(session, checkpoint_path, step)

    def _stat_state(self):
        try:
            st = os.stat(self._state_file)
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _maybe_reload(self) -> None:
        if self._stat_state() != self._state_sig and self._reload_lock.acquire(blocking=False):
            try:
                self._reload_locked()
            finally:
                self._reload_lock.release()

    def _reload_locked(self) -> bool:
        from flowgraph.train import checkpoint_state

        sig = self._stat_state()
        if sig == self._state_sig:
            return False
        path = checkpoint_state.latest_checkpoint(self._model_dir)
        if not path or path == self._snapshot.checkpoint_path:
            self._state_sig = sig
            return False
        try:
            last = self._last_feed  # warm up on the last request's first row
            warm = ({t: v[:1] if getattr(v, "ndim", 0) else v for t, v in last.items()}
                    if last else self._warmup_feed())
            snap = self._load(path, warm)
        except Exception as e:
            self._state_sig = sig  # do not retry on every call; the next save retries
            logger.warning("Cached predictor: could not load %s; still serving %s: %s",
                           path, self._snapshot.checkpoint_path, e)
            return False
        with self._cond:
            self._state_sig = sig
            if self._closed:
                retired = snap
            else:
                retired, self._snapshot = self._snapshot, snap
            retired.retired = True
            close = retired.should_close()  # else the last call in flight closes it
        if close:
            retired.session.close()
        return retired is not snap

    def reload(self) -> bool:
        """Load the latest checkpoint of model_dir now if it is newer than the one in use
        (calls check this themselves; this is for callers who want it at a set time).

        Returns
        -------
        bool
            Whether a new checkpoint was loaded.

        Example
        -------
        >>> predictor.reload()   # doctest: +SKIP
        False
        """
        if not self._watch:
            return False
        with self._reload_lock:
            return self._reload_locked()

    # -- lifetime -----------------------------------------------------------------------------
    def close(self, timeout: float | None = None) -> None:
        """Close the session once the calls in flight have finished; later calls raise
        RuntimeError. Closing twice is harmless."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            snap = self._snapshot
            snap.retired = True
            self._cond.wait_for(lambda: snap.inflight == 0, timeout=timeout)
            close = not snap.closing
            snap.closing = True
        if close:
            snap.session.close()

    def __enter__(self) -> CachedPredictor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if not self._closed:
                self._snapshot.session.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        state = "closed" if getattr(self, "_closed", True) else (
            f"step {self._snapshot.global_step}")
        return (f"<CachedPredictor of {type(self._estimator).__name__} "
                f"model_dir={self._model_dir!r} inputs={sorted(self._inputs)} {state}>")
