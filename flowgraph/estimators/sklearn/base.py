"""What the scikit-learn facade classes share: data in, a canned estimator, weights out.

A facade estimator is a scikit-learn estimator (``__init__`` only stores its arguments)
that, when fitted, builds one of the canned `tf.estimator` models and trains it exactly
as a user would: feature columns, ``numpy_input_fn``, ``Estimator.train``,
``Estimator.predict``. Its state::

    params (get_params)            what __init__ stored; never changed by fit
    classes_, n_features_in_, ...  fitted attributes (plain data)
    _schema                        how columns of X become features (plain data)
    _model: _ModelState            the trained weights: a checkpoint in a private
                                   temporary model_dir, or NumPy arrays (after unpickling)
                                   written to a fresh model_dir on first use

Data: NumPy arrays, array-likes, SciPy sparse matrices (densified to float32: the first
layer of every model here is dense) and pandas DataFrames. An all-numeric input becomes
one feature ``x`` (``numeric_column("x", shape=[n_features])``). A DataFrame with
non-numeric columns (object, string, category) keeps them: each becomes
``categorical_column_with_vocabulary_list`` (the values seen by the first fit, plus one
out-of-vocabulary bucket), entering linear models directly and DNNs through an
``indicator_column`` (up to 16 values) or an ``embedding_column``.

Pickling (joblib workers, `copy.deepcopy`) carries the weights as arrays, never the
temporary path; flowgraph's own files stay pickle-free.
"""

from __future__ import annotations

import functools
import math
import numbers
import os
import re
import shutil
import tempfile
import threading
import weakref

import numpy as np

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import _check_feature_names, _check_n_features
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover - older scikit-learn
    def _validate_data(est, X="no_validation", y="no_validation", reset=True, **kw):
        return est._validate_data(X, y, reset=reset, **kw)

    def _check_feature_names(est, X, *, reset):
        est._check_feature_names(X, reset=reset)

    def _check_n_features(est, X, reset):
        est._check_n_features(X, reset=reset)

from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

WEIGHT_KEY = "__sample_weight__"
DENSE_KEY = "x"
_MAX_DENSE_BYTES = 4 << 30
_INDICATOR_MAX_VALUES = 16

_ACTIVATIONS = ("relu", "tanh", "sigmoid", "elu", "selu", "softplus", "relu6", "leaky_relu",
                "softsign")


# -- the trained weights ----------------------------------------------------------------------
class _ModelState:
    """The weights of a fitted facade estimator: a checkpoint in a private temporary
    directory (removed when this object is collected), or arrays waiting to be written
    to one."""

    def __init__(self, model_dir: str | None = None, arrays: dict | None = None) -> None:
        self._dir = model_dir
        self._arrays = arrays
        self._pending = None  # a warm trainer's save(), run before anyone reads the dir
        self._lock = threading.Lock()
        if model_dir is not None:
            self._own(model_dir)

    @classmethod
    def fresh(cls) -> _ModelState:
        return cls(tempfile.mkdtemp(prefix="flowgraph_sklearn_"))

    def _own(self, model_dir: str) -> None:
        weakref.finalize(self, shutil.rmtree, model_dir, True)

    def model_dir(self) -> str:
        """The model directory, written from the arrays on first use after unpickling."""
        with self._lock:
            if self._dir is None:
                from flowgraph.train.checkpoint_state import update_checkpoint_state
                from flowgraph.train.checkpoint_utils import write_checkpoint

                model_dir = tempfile.mkdtemp(prefix="flowgraph_sklearn_")
                self._own(model_dir)
                step = int(np.asarray(self._arrays.get("global_step", 0)))
                path = os.path.join(model_dir, f"model.ckpt-{step}")
                write_checkpoint(path, self._arrays)
                update_checkpoint_state(model_dir, path)
                self._dir = model_dir
            self._flush_locked()
            return self._dir

    def _flush_locked(self) -> None:
        if self._pending is not None:
            save, self._pending = self._pending, None
            save()

    def trained(self, pending_save=None) -> None:
        """The checkpoint changed (or will, when `pending_save` runs on the next read of
        the model directory): drop the cached arrays."""
        self._arrays = None
        self._pending = pending_save

    def arrays(self) -> dict:
        """Every tensor of the latest checkpoint (weights and optimizer slots)."""
        with self._lock:
            if self._arrays is not None:
                return dict(self._arrays)
            self._flush_locked()
            from flowgraph.train.checkpoint_state import latest_checkpoint
            from flowgraph.train.checkpoint_utils import CheckpointReader

            path = latest_checkpoint(self._dir)
            if path is None:
                raise ValueError(f"the fitted model has no checkpoint in {self._dir}")
            with CheckpointReader(path) as reader:
                return {name: np.array(reader.get_tensor(name))
                        for name in sorted(reader.get_variable_to_shape_map())}


def _save_at_end_hook(model_dir: str):
    """A hook saving one checkpoint when training ends (what `CheckpointSaverHook` does
    at the end, without its summary writer and its step-0 checkpoint)."""
    from flowgraph.train.session_run_hook import SessionRunHook

    class _SaveAtEnd(SessionRunHook):
        def begin(self):
            from flowgraph.framework.graph import GraphKeys, get_collection
            from flowgraph.train.training_util import get_global_step

            self._step = get_global_step()
            self._saver = get_collection(GraphKeys.SAVERS)[0]

        def end(self, session):
            step = int(session.run(self._step))
            self._saver.save(session, os.path.join(model_dir, "model.ckpt"), global_step=step)

    return _SaveAtEnd()


def _params_key(params: dict) -> tuple:
    return tuple(sorted(params.items(), key=lambda kv: kv[0]))


def _same_key(a: tuple, b: tuple) -> bool:
    """Whether two warm-trainer keys match (the model state by identity; parameters by
    equality, where comparing a value fails or is ambiguous, by identity)."""
    if a[0] is not b[0] or a[2] != b[2] or len(a[1]) != len(b[1]):
        return False
    for (ka, va), (kb, vb) in zip(a[1], b[1], strict=True):
        if ka != kb:
            return False
        if va is vb:
            continue
        try:
            if type(va) is not type(vb) or not bool(va == vb):
                return False
        except (TypeError, ValueError):
            return False
    return True


# -- input conversion -------------------------------------------------------------------------
def _is_dataframe(X) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _is_numeric_series(series) -> bool:
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    return is_numeric_dtype(series.dtype) or is_bool_dtype(series.dtype)


def _needs_frame_mode(X) -> bool:
    return _is_dataframe(X) and not all(_is_numeric_series(X[c]) for c in X.columns)


def _feature_key(name, taken: set) -> str:
    key = re.sub(r"[^A-Za-z0-9_.\-]", "_", str(name)).strip("_.-") or "column"
    if not key[0].isalpha():
        key = "c_" + key
    base, i = key, 1
    while key in taken or key in (DENSE_KEY, WEIGHT_KEY):
        key, i = f"{base}_{i}", i + 1
    taken.add(key)
    return key


def _category_strings(series) -> np.ndarray:
    """Values of a categorical column as an object array of str ('' for missing)."""
    values = series.astype(object).to_numpy()
    missing = series.isna().to_numpy()
    return np.array(["" if m else str(v) for v, m in zip(values, missing)], dtype=object)


def _vocabulary(series) -> tuple[str, ...]:
    if hasattr(series, "cat"):
        values = [str(c) for c in series.cat.categories]
    else:
        values = sorted({str(v) for v in series.dropna().astype(object)})
    return tuple(values) or ("",)


def _dense_float32(X) -> np.ndarray:
    import scipy.sparse as sp

    if sp.issparse(X):
        nbytes = X.shape[0] * X.shape[1] * 4
        if nbytes > _MAX_DENSE_BYTES:
            raise ValueError(
                f"The sparse input of shape {X.shape} would take {nbytes / 2**30:.1f} GiB "
                f"as the dense float32 matrix the models' first layer needs; reduce the "
                f"features (e.g. sklearn.feature_extraction.FeatureHasher with fewer "
                f"n_features) or use a canned estimator with categorical feature columns.")
        return np.asarray(X.toarray(), dtype=np.float32)
    return np.ascontiguousarray(X, dtype=np.float32)


def _checked_sample_weight(sample_weight, X) -> np.ndarray:
    try:
        return _check_sample_weight(sample_weight, X, dtype=np.float32,
                                    ensure_non_negative=True)
    except TypeError:  # scikit-learn < 1.6 spells it only_non_negative
        return _check_sample_weight(sample_weight, X, dtype=np.float32,
                                    only_non_negative=True)


def check_positive_int(value, name: str, allow_none: bool = False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}")
    return int(value)


def activation_of(value, name: str = "activation_fn"):
    """A flowgraph activation from its name ('relu', 'tanh', ...) or a callable."""
    if callable(value):
        return value
    if value in ("identity", "linear", None):
        return None
    if value not in _ACTIVATIONS:
        raise ValueError(f"{name} must be a callable or one of {(*_ACTIVATIONS, 'identity')}"
                         f"; got {value!r}")
    from flowgraph import nn

    return getattr(nn, value)


def optimizer_of(optimizer, learning_rate, name: str = "optimizer"):
    """The canned estimator's `optimizer` argument: names with an explicit learning rate
    become a picklable factory; anything else passes through (a name then trains at the
    canned estimator's default rate)."""
    from flowgraph.estimators.canned import optimizers

    if learning_rate is None:
        return optimizer
    if not isinstance(learning_rate, numbers.Real) or learning_rate <= 0:
        raise ValueError(f"learning rate for {name} must be a positive number or None; got "
                         f"{learning_rate!r}")
    if not isinstance(optimizer, str):
        raise ValueError(f"a learning rate applies to an optimizer given by name; {name} is "
                         f"{optimizer!r}: set its learning rate there instead")
    classes = optimizers._optimizer_classes()
    if optimizer not in classes:
        optimizers.get_optimizer_instance(optimizer, learning_rate)  # raises the TF error
    return functools.partial(classes[optimizer], learning_rate=float(learning_rate))


# -- the shared estimator ---------------------------------------------------------------------
class FlowgraphModel(BaseEstimator):
    """Fit/predict plumbing shared by the facade classes (not used directly).

    Subclasses define ``_canned(feature_columns, model_dir, config, n_outputs)`` returning
    the canned `Estimator`, ``_prediction_key``, and the label handling
    (``_encode_y`` / ``_label_setup``)."""

    _prediction_key = "logits"

    # -- scikit-learn tags --------------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.string = False
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"allow_nan": False}

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "_model")

    # -- data -----------------------------------------------------------------------------
    def _check_X(self, X, y=None, reset: bool = False, with_y: bool = False):
        """Validated ``(X, y)``: X a float array / CSR matrix, or the DataFrame itself when
        it has non-numeric columns; sets or checks n_features_in_ / feature_names_in_."""
        frame = _needs_frame_mode(X)
        if not reset and hasattr(self, "_schema") and self._schema["frame"] != frame:
            raise ValueError(
                f"{type(self).__name__} was fitted on "
                + ("a DataFrame with categorical columns" if self._schema["frame"]
                   else "numeric data")
                + f" but X is {'a DataFrame with categorical columns' if frame else 'numeric'};"
                f" pass data with the same columns as in fit.")
        if not frame:
            kwargs = dict(accept_sparse="csr", dtype=[np.float64, np.float32], reset=reset)
            if with_y:
                return _validate_data(self, X, y, y_numeric=self._y_numeric,
                                      multi_output=self._multi_output, **kwargs)
            return _validate_data(self, X, **kwargs), None
        _check_feature_names(self, X, reset=reset)
        _check_n_features(self, X, reset=reset)
        if X.shape[0] == 0:
            raise ValueError(f"Found array with 0 sample(s) (shape={X.shape}) while a minimum "
                             f"of 1 is required by {type(self).__name__}.")
        if with_y:
            if y is None:
                raise ValueError(f"This {type(self).__name__} estimator requires y to be "
                                 f"passed, but the target y is None.")
            from sklearn.utils.validation import check_consistent_length, column_or_1d

            y = np.asarray(y)
            if self._y_numeric:
                y = y.astype(np.float64)
                if not np.isfinite(y).all():
                    raise ValueError("Input y contains NaN or infinity.")
            if not (self._multi_output and y.ndim == 2):
                y = column_or_1d(y, warn=True)
            check_consistent_length(X, y)
        return X, y

    def _build_schema(self, X) -> dict:
        if not _needs_frame_mode(X):
            return {"frame": False, "n_dense": int(X.shape[1]), "dense": (), "categorical": ()}
        dense, categorical, taken = [], [], set()
        for col in X.columns:
            if _is_numeric_series(X[col]):
                dense.append(col)
            else:
                categorical.append((col, _feature_key(col, taken), _vocabulary(X[col])))
        return {"frame": True, "n_dense": len(dense), "dense": tuple(dense),
                "categorical": tuple(categorical)}

    def _features(self, X) -> dict:
        schema = self._schema
        if not schema["frame"]:
            return {DENSE_KEY: _dense_float32(X)}
        features = {}
        if schema["dense"]:
            block = X[list(schema["dense"])].to_numpy(dtype=np.float32)
            if not np.isfinite(block).all():
                raise ValueError("Input X contains NaN or infinity in its numeric columns.")
            features[DENSE_KEY] = np.ascontiguousarray(block)
        for col, key, _ in schema["categorical"]:
            features[key] = _category_strings(X[col])
        return features

    def _feature_columns(self) -> tuple[list, list]:
        """``(linear_columns, dnn_columns)`` for the schema."""
        from flowgraph import feature_column as fc

        schema = self._schema
        linear, dnn = [], []
        if schema["n_dense"]:
            numeric = fc.numeric_column(DENSE_KEY, shape=[schema["n_dense"]])
            linear.append(numeric)
            dnn.append(numeric)
        for _, key, vocab in schema["categorical"]:
            cat = fc.categorical_column_with_vocabulary_list(key, list(vocab),
                                                             num_oov_buckets=1)
            linear.append(cat)
            if len(vocab) + 1 <= _INDICATOR_MAX_VALUES:
                dnn.append(fc.indicator_column(cat))
            else:
                dim = int(min(50, max(2, round(1.6 * (len(vocab) + 1) ** 0.56))))
                dnn.append(fc.embedding_column(cat, dimension=dim))
        return linear, dnn

    # -- the canned estimator -------------------------------------------------------------
    def _config(self):
        from flowgraph.estimators.run_config import RunConfig

        # No periodic checkpoints, summaries or step logs: `_fit` saves once at the end.
        return RunConfig(tf_random_seed=self._seed, save_summary_steps=None,
                         save_checkpoints_secs=None, save_checkpoints_steps=None,
                         keep_checkpoint_max=1, log_step_count_steps=None)

    def _estimator(self):
        linear, dnn = self._feature_columns()
        return self._canned(linear, dnn, self._model.model_dir(), self._config(),
                            self._n_outputs)

    @property
    def estimator_(self):
        """The fitted canned `tf.estimator` model (its model_dir is private and temporary:
        export what you need, e.g. with ``export_saved_model``)."""
        if not hasattr(self, "_model"):
            raise AttributeError(f"This {type(self).__name__} instance is not fitted yet.")
        return self._estimator()

    # -- fitting --------------------------------------------------------------------------
    def _check_params(self) -> None:
        check_positive_int(self.batch_size, "batch_size")
        check_positive_int(self.n_epochs, "n_epochs")
        check_positive_int(self.steps, "steps", allow_none=True)

    def _fit(self, X, y, sample_weight, *, reset: bool, epochs: int, classes=None,
             warm: bool = False):
        """Train; `warm` (``partial_fit``) keeps the graph and session between calls
        (see `warm.WarmTrainer`), otherwise one ``Estimator.train`` call."""
        self._check_params()
        X, y = self._check_X(X, y, reset=reset, with_y=True)
        n = X.shape[0]
        sample_weight = _checked_sample_weight(sample_weight, X)
        if not np.any(sample_weight > 0):
            raise ValueError("Sample weights must contain at least one non-zero number.")
        if reset:
            self._schema = self._build_schema(X)
            self._seed = int(check_random_state(self.random_state).randint(2**31 - 1))
            labels = self._label_setup(y, classes)
            self._model = _ModelState.fresh()
        else:
            labels = self._encode_y(y)
        features = self._features(X)
        features[WEIGHT_KEY] = np.asarray(sample_weight, dtype=np.float32)
        batch = min(self.batch_size, n)
        steps = self.steps or epochs * math.ceil(n / batch)
        try:
            if warm:
                trainer = self._warm_trainer(features, labels)
                trainer.train(features, labels, steps, batch)
            else:
                self._drop_warm_trainer()
                from flowgraph.estimators.inputs import numpy_input_fn

                input_fn = numpy_input_fn(features, labels, batch_size=batch,
                                          num_epochs=None, shuffle=True)
                self._estimator().train(input_fn, steps=steps,
                                        hooks=[_save_at_end_hook(self._model.model_dir())])
        except BaseException:
            # A warm session keeps (and saves) what it trained before the failure, as
            # Estimator.train saves on an interrupt; earlier partial_fit calls may not
            # have been written yet.
            self._drop_warm_trainer(save=not reset)
            if reset:  # a model without a checkpoint is not fitted
                del self._model
            raise
        self._model.trained(trainer.save if warm else None)
        done = steps * batch / n if self.steps else epochs
        self.n_iter_ = done if reset else self.n_iter_ + done
        return self

    def _warm_trainer(self, features: dict, labels: np.ndarray):
        """The kept training session, rebuilt when the model, the parameters or the
        features' names, dtypes or shapes changed."""
        from flowgraph.estimators.sklearn.warm import WarmTrainer, signature_of

        key = (self._model, _params_key(self.get_params(deep=False)),
               signature_of(features, labels))
        current = self.__dict__.get("_warm")
        if current is not None and _same_key(current[0], key):
            return current[1]
        self._drop_warm_trainer()
        trainer = WarmTrainer(self._estimator(), features, labels, self._seed)
        self._warm = (key, trainer)
        return trainer

    def _drop_warm_trainer(self, save: bool = True) -> None:
        """Close the kept session, first saving what it trained unless `save` is False
        (a model being discarded)."""
        current = self.__dict__.pop("_warm", None)
        if current is not None:
            if not save:
                current[0][0].trained(None)
            current[1].close(save=save)

    def _can_continue(self, X) -> bool:
        if not hasattr(self, "_model"):
            return False
        try:
            self._check_X(X, reset=False)
        except ValueError:
            return False
        return self._schema == self._build_schema(X)

    # -- predicting -----------------------------------------------------------------------
    def _raw_predictions(self, X) -> np.ndarray:
        check_is_fitted(self)
        X, _ = self._check_X(X, reset=False)
        features = self._features(X)
        n = X.shape[0]
        from flowgraph.estimators.inputs import numpy_input_fn

        input_fn = numpy_input_fn(features, batch_size=min(n, 4096), num_epochs=1,
                                  shuffle=False)
        key = self._prediction_key
        parts = [batch[key] for batch in self._estimator().predict(
            input_fn, predict_keys=[key], yield_single_examples=False)]
        out = np.concatenate(parts, axis=0) if parts else np.zeros((0, self._n_outputs))
        return np.asarray(out, dtype=np.float64).reshape(n, -1)

    # -- pickling -------------------------------------------------------------------------
    def __getstate__(self):
        state = dict(super().__getstate__())  # object.__getstate__ returns __dict__ itself
        state.pop("_warm", None)  # a live session; rebuilt by the next partial_fit
        model = state.pop("_model", None)
        if model is not None:
            state["_model_arrays"] = model.arrays()
        return state

    def __setstate__(self, state):
        arrays = state.pop("_model_arrays", None)
        super().__setstate__(state)
        if arrays is not None:
            self._model = _ModelState(arrays=arrays)


class BaselineParams:
    """Parameters and canned model shared by the Baseline facades, which ignore the
    features. Subclasses name their canned class in ``_canned_name``."""

    _canned_name = ""

    def __init__(self, optimizer="Ftrl", learning_rate=None, batch_size=32, n_epochs=20,
                 steps=None, warm_start=False, random_state=None) -> None:
        self.optimizer = optimizer
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.n_epochs = n_epochs
        self.steps = steps
        self.warm_start = warm_start
        self.random_state = random_state

    def _canned(self, linear_columns, dnn_columns, model_dir, config, n_outputs):
        from flowgraph.estimators import canned

        return getattr(canned, self._canned_name)(
            model_dir=model_dir, optimizer=optimizer_of(self.optimizer, self.learning_rate),
            config=config, **self._canned_head_args())
