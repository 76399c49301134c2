"""TensorFlow 2's SavedModel entry points as `tf.compat.v1` has them in graph mode:
`save`, `load_v2`, `Asset`, `SaveOptions`, and ``tf.saved_model.experimental``.

- `save(obj, export_dir)` writes a SavedModel of a trackable object (`tf.Module`,
  `tf.train.Checkpoint`, ...). In graph mode TensorFlow cannot read the values of
  variables without a session (its reference variables fail), so an object that tracks
  variables is refused with TypeError naming the alternative (`simple_save` or
  `SavedModelBuilder` with a session); a variable-free object gets a SavedModel with
  one empty ``serve`` meta graph, as TensorFlow writes.
- `load_v2(export_dir)` returns the loaded model (`flowgraph.saved_model.load`): its
  ``signatures[key](**inputs)`` run in the model's own graph and session, taking and
  returning NumPy values (TensorFlow's graph mode builds the call into the caller's
  graph instead).
- `Asset(path)`: ``asset_path`` is a string constant named ``asset_path``.

Example
-------
>>> import flowgraph as tf
>>> opts = tf.saved_model.SaveOptions(namespace_whitelist=["Custom"])
>>> opts.namespace_whitelist, opts.experimental_variable_policy
(['Custom'], <VariablePolicy.NONE: None>)
"""

from __future__ import annotations

import enum
import os
import types

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant
from flowgraph.framework.graph import Graph
from flowgraph.ops.module import Module
from flowgraph.ops.variables import Variable
from flowgraph.train.checkpoint_object_graph import is_trackable

__all__ = ["Asset", "SaveOptions", "experimental", "load_v2", "save"]


class VariablePolicy(enum.Enum):
    """How `save` treats variables' devices and distributed variables."""

    NONE = None
    SAVE_VARIABLE_DEVICES = "save_variable_devices"
    EXPAND_DISTRIBUTED_VARIABLES = "expand_distributed_variables"

    @classmethod
    def from_obj(cls, obj) -> VariablePolicy:
        if obj is None:
            return cls.NONE
        if isinstance(obj, cls):
            return obj
        key = str(obj).lower()
        for policy in cls:
            if key == policy.value:
                return policy
        raise ValueError(f"Received invalid VariablePolicy value: {obj}.")


class SaveOptions:
    """Options of `save` (kept; flowgraph writes no function library, so the
    namespace whitelist and function aliases have nothing to act on)."""

    __slots__ = ("experimental_custom_gradients", "experimental_image_format",
                 "experimental_io_device", "experimental_skip_saver",
                 "experimental_variable_policy", "function_aliases", "namespace_whitelist",
                 "save_debug_info")

    def __init__(self, namespace_whitelist=None, save_debug_info=False,
                 function_aliases=None, experimental_io_device=None,
                 experimental_variable_policy=None, experimental_custom_gradients=True,
                 experimental_image_format=False, experimental_skip_saver=False) -> None:
        self.namespace_whitelist = list(namespace_whitelist or [])
        self.save_debug_info = save_debug_info
        self.function_aliases = dict(function_aliases or {})
        self.experimental_io_device = experimental_io_device
        self.experimental_variable_policy = VariablePolicy.from_obj(
            experimental_variable_policy)
        self.experimental_custom_gradients = experimental_custom_gradients
        self.experimental_image_format = experimental_image_format
        self.experimental_skip_saver = experimental_skip_saver


class Asset:
    """A file the SavedModel carries; `asset_path` is its path as a string tensor.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     a = tf.saved_model.Asset("/data/vocab.txt")
    ...     print(a.asset_path.name, tf.Session().run(a.asset_path))
    asset_path:0 b'/data/vocab.txt'
    """

    def __init__(self, path) -> None:
        path = os.fspath(path) if not hasattr(path, "op") else path
        self._path = path
        self.asset_path = path if hasattr(path, "op") else constant(
            path, dtype=_dtypes.string, name="asset_path")


class TrackableResource:
    """A resource (a table, a queue) created on first use of `resource_handle` by the
    subclass's ``_create_resource()``."""

    def __init__(self, device: str = "") -> None:
        self._resource_device = device
        self._handle = None

    def _create_resource(self):
        raise NotImplementedError(f"{type(self).__name__} must implement _create_resource")

    def _initialize(self):
        return None

    @property
    def resource_handle(self):
        if self._handle is None:
            self._handle = self._create_resource()
        return self._handle


def _tracked_variables(obj, seen=None) -> list:
    seen = seen if seen is not None else set()
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, Variable):
        return [obj]
    if isinstance(obj, Module):
        return list(obj.variables)
    found = []
    values = vars(obj).values() if hasattr(obj, "__dict__") else []
    for value in values:
        items = value if isinstance(value, list | tuple) else (
            value.values() if isinstance(value, dict) else [value])
        for item in items:
            if is_trackable(item):
                found += _tracked_variables(item, seen)
    return found


def save(obj, export_dir, signatures=None, options=None) -> None:
    """Write a SavedModel of the trackable `obj` (see the module docstring)."""
    from flowgraph.saved_model.builder import SavedModelBuilder
    from flowgraph.saved_model.constants import SERVING

    if not is_trackable(obj):
        raise ValueError(f"Expected an object of type `Trackable`, such as `tf.Module` or a "
                         f"subclass of the `Trackable` class, for export. Got {obj} with "
                         f"type {type(obj)}.")
    if options is not None and not isinstance(options, SaveOptions):
        raise TypeError(f"options must be a tf.saved_model.SaveOptions, got {options!r}")
    variables = _tracked_variables(obj)
    if variables:
        raise TypeError(
            f"tf.saved_model.save in graph mode cannot read the values of the "
            f"{len(variables)} variable(s) {obj!r} tracks (TensorFlow 2.15's graph mode "
            "fails on them too); export with tf.saved_model.simple_save or "
            "tf.saved_model.builder.SavedModelBuilder inside a session instead")
    if signatures:
        raise ValueError("tf.saved_model.save: signatures need traced functions, which "
                         "graph mode does not make; export with SavedModelBuilder and "
                         "signature_def_utils instead")
    from flowgraph.runtime.session import Session

    builder = SavedModelBuilder(export_dir)
    with Graph().as_default(), Session() as sess:
        builder.add_meta_graph_and_variables(sess, [SERVING])
    builder.save()


def load_v2(export_dir, tags=None, options=None):
    """Load the SavedModel in `export_dir` as a model object (see the module
    docstring); `tags` picks the meta graph (``serve`` by default)."""
    from flowgraph.saved_model.constants import SERVING
    from flowgraph.saved_model.loader import maybe_saved_model_directory
    from flowgraph.saved_model.predictor import load

    path = os.fspath(export_dir)
    if not maybe_saved_model_directory(path):
        raise OSError(f"SavedModel file does not exist at: {path}/"
                      "{saved_model.pbtxt|saved_model.pb}")
    if tags is None:
        tags = (SERVING,)
    elif isinstance(tags, str):
        tags = (tags,)
    return load(path, tags=tuple(tags))


experimental = types.SimpleNamespace(save=save, VariablePolicy=VariablePolicy,
                                     TrackableResource=TrackableResource)
