"""`tf.keras.backend`: the per-graph state behind the Keras layers.

Keras keeps three things per graph, here in ``graph.__dict__["_keras_state"]``:

* name counters, so that layers are named ``dense``, ``dense_1``, ... when they are
  constructed (`unique_object_name`; kept in the graph by
  `flowgraph.framework.object_names`, shared with `tf.layers` layers and RNN cells);
* the *learning phase*: a ``placeholder_with_default(False)`` named
  ``keras_learning_phase`` that layers such as `Dropout` and `BatchNormalization` read
  when they are called without ``training=``, or a fixed 0/1 set with
  `set_learning_phase` (then the branch is chosen while the graph is built);
* the session `get_session` returns (the default session if one is entered, else one
  owned by Keras); every time it is returned, the graph's variables that are not yet
  initialized are initialized, so `Model.get_weights` works right after building.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     lp = keras.backend.learning_phase()
...     print(lp.name, keras.backend.get_session().run(lp))
keras_learning_phase:0 False
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import object_names as _object_names
from flowgraph.framework.graph import get_default_graph, get_default_session
from flowgraph.ops import array_ops
from flowgraph.ops import variables as _variables

__all__ = [
    "backend",
    "batch_get_value",
    "batch_set_value",
    "clear_session",
    "epsilon",
    "floatx",
    "get_session",
    "get_value",
    "image_data_format",
    "learning_phase",
    "learning_phase_scope",
    "manual_variable_initialization",
    "set_epsilon",
    "set_floatx",
    "set_image_data_format",
    "set_learning_phase",
    "set_session",
    "set_value",
]

# process-wide settings, as Keras keeps them (set_epsilon, set_floatx, ...)
_CONFIG = {"epsilon": 1e-7, "floatx": "float32", "image_data_format": "channels_last",
           "manual_init": False}


def backend() -> str:
    """The name of the backend Keras runs on: ``'tensorflow'`` (flowgraph stands in)."""
    return "tensorflow"


def epsilon() -> float:
    """The fuzz factor added to denominators and used to clip probabilities (1e-7)."""
    return _CONFIG["epsilon"]


def set_epsilon(value: float) -> None:
    """Set the fuzz factor `epsilon` returns."""
    _CONFIG["epsilon"] = value


def floatx() -> str:
    """The default float type of layer weights: ``'float32'`` unless `set_floatx`."""
    return _CONFIG["floatx"]


def set_floatx(value: str) -> None:
    """Set the default float type: ``'float16'``, ``'float32'`` or ``'float64'``."""
    accepted = {"float16", "float32", "float64"}
    if value not in accepted:
        raise ValueError(f"Unknown `floatx` value: {value}. Expected one of {accepted}")
    _CONFIG["floatx"] = str(value)


def image_data_format() -> str:
    """The default image layout: ``'channels_last'`` unless `set_image_data_format`."""
    return _CONFIG["image_data_format"]


def set_image_data_format(data_format: str) -> None:
    """Set the default image layout: ``'channels_last'`` or ``'channels_first'``."""
    accepted = {"channels_first", "channels_last"}
    if data_format not in accepted:
        raise ValueError(f"Unknown `data_format`: {data_format}. Expected one of {accepted}")
    _CONFIG["image_data_format"] = str(data_format)


def manual_variable_initialization(value: bool) -> None:
    """With True, `get_session` no longer initializes the graph's variables (the
    program runs the initializers itself)."""
    _CONFIG["manual_init"] = bool(value)


def _state(graph=None) -> dict:
    graph = graph or get_default_graph()
    return graph.__dict__.setdefault("_keras_state", {"uids": {}, "session": None})


def unique_object_name(base: str, zero_based: bool = True) -> str:
    """``base``, ``base_1``, ... (or ``base_1``, ``base_2``, ... when not zero-based),
    unique per graph; the counters are shared with `tf.layers` layers and RNN cells
    (`flowgraph.framework.object_names`)."""
    return _object_names.unique_object_name(base, zero_based)


# -- learning phase -----------------------------------------------------------------------
def learning_phase():
    """The learning phase of the default graph: 0/1 if fixed with `set_learning_phase`,
    else the bool tensor ``keras_learning_phase`` (False unless fed True)."""
    graph = get_default_graph()
    state = _state(graph)
    if "phase_value" in state:
        return state["phase_value"]
    if "phase" not in state:
        with graph.control_dependencies(None), graph.name_scope(""):
            state["phase"] = array_ops.placeholder_with_default(
                False, shape=(), name="keras_learning_phase")
    return state["phase"]


def set_learning_phase(value) -> None:
    """Fix the learning phase of the default graph: 1 (training) or 0 (inference).

    Layers called afterwards choose their training or inference branch while the graph
    is built (no `tf.cond`).
    """
    if value not in (0, 1):
        raise ValueError(f"Expected learning phase to be 0 or 1; got {value!r}.")
    _state()["phase_value"] = int(value)


def _reset_learning_phase(graph=None) -> None:
    _state(graph).pop("phase_value", None)


class learning_phase_scope:
    """``with learning_phase_scope(1):`` fixes the learning phase of the default graph
    to 1 (or 0) inside the block and puts back what was there on exit."""

    def __init__(self, value) -> None:
        if value not in (0, 1):
            raise ValueError("Expected learning phase to be 0 or 1.")
        self._value = int(value)

    def __enter__(self):
        self._graph = get_default_graph()
        state = _state(self._graph)
        self._previous = state.get("phase_value")
        state["phase_value"] = self._value
        return self._value

    def __exit__(self, *exc) -> None:
        state = _state(self._graph)
        if self._previous is None:
            state.pop("phase_value", None)
        else:
            state["phase_value"] = self._previous


# -- sessions ------------------------------------------------------------------------------
def track_variable(var) -> None:
    """Have `get_session` initialize `var`, a variable Keras keeps out of the graph's
    collections (a metric's state, as TF 2.15's graph-mode Keras does)."""
    _state(var.graph).setdefault("tracked", []).append(var)


def _initialize_variables(sess) -> None:
    if _CONFIG["manual_init"]:
        return
    tracked = _state(sess.graph).get("tracked", [])
    candidates = [v for v in [*_variables.global_variables(), *tracked]
                  if not getattr(v, "_keras_initialized", False)]
    if not candidates:
        return
    flags = sess.run([_variables.is_variable_initialized(v) for v in candidates])
    todo = [v for v, ok in zip(candidates, flags, strict=True) if not ok]
    if todo:
        sess.run([v.initializer for v in todo])
    for v in candidates:
        v._keras_initialized = True


def get_session():
    """The session Keras uses on the default graph, with its variables initialized.

    The default session if one is entered (``with sess.as_default():``), else a session
    owned by Keras (created on first use, closed by `clear_session`).
    """
    graph = get_default_graph()
    sess = get_default_session()
    if sess is None or sess.graph is not graph:
        state = _state(graph)
        sess = state["session"]
        if sess is None or getattr(sess, "_closed", False):
            from flowgraph.runtime.session import Session

            sess = state["session"] = Session(graph=graph)
    _initialize_variables(sess)
    return sess


def set_session(session) -> None:
    """Make Keras use `session` for its graph."""
    _state(session.graph)["session"] = session


def clear_session() -> None:
    """Close Keras' session, reset the name counters and the learning phase, and (when
    no graph or session context is open) start a new default graph."""
    from flowgraph.framework import graph as _graph

    state = _state()
    if state["session"] is not None:
        state["session"].close()
    get_default_graph().__dict__.pop("_keras_state", None)
    _object_names.reset_object_names()
    try:
        _graph.reset_default_graph()
    except AssertionError:
        pass


# -- values ----------------------------------------------------------------------------------
def _session_of(items):
    """Keras' session on the graph of `items` (not necessarily the default graph)."""
    graph = items[0].graph
    if graph is get_default_graph():
        return get_session()
    with graph.as_default():
        return get_session()


def batch_get_value(tensors) -> list[np.ndarray]:
    """The values of a list of variables or tensors (one `Session.run`)."""
    tensors = list(tensors)
    if not tensors:
        return []
    return list(_session_of(tensors).run(tensors))


def get_value(x) -> np.ndarray:
    return batch_get_value([x])[0]


def batch_set_value(pairs) -> None:
    """Assign ``[(variable, value), ...]`` in one `Session.run`, adding no graph ops."""
    pairs = list(pairs)
    if not pairs:
        return
    sess = _session_of([var for var, _ in pairs])
    feeds, ops = {}, []
    for var, value in pairs:
        arr = np.asarray(value, dtype=var.dtype.base_dtype.as_numpy_dtype)
        if not var.shape.is_compatible_with(arr.shape):
            raise ValueError(f"Cannot assign a value of shape {arr.shape} to variable "
                             f"'{var.op.name}' of shape {var.shape}.")
        feeds[var.initial_value] = arr
        ops.append(var.initializer)
    sess.run(ops, feed_dict=feeds)


def set_value(x, value) -> None:
    batch_set_value([(x, value)])


def as_float_dtype(dtype):
    dtype = _dtypes.as_dtype(dtype or floatx())
    return dtype.base_dtype
