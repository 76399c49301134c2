"""TF1's ``tf.contrib.framework`` variable helpers (also ``tf.contrib.slim``'s): variables
made in the right collections, looked up by scope, name or suffix, and restored from a
checkpoint for fine-tuning.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     with tf.variable_scope("net"):
...         w = model_variable("weights", [2, 3])
...         b = variable("bias", [3])
...     print([v.op.name for v in get_model_variables()],
...           [v.op.name for v in get_variables_to_restore(exclude=["net/bias"])])
['net/weights'] ['net/weights']
"""

from __future__ import annotations

import logging
import re

from flowgraph.contrib.framework.arg_scope import add_arg_scope
from flowgraph.framework import dtypes
from flowgraph.framework.graph import (
    GraphKeys,
    add_to_collection,
    device,
    get_collection,
    get_collection_ref,
)
from flowgraph.ops import array_ops, control_flow_ops, state_ops
from flowgraph.ops import variable_scope as vs
from flowgraph.ops import variables as variables_lib
from flowgraph.train import checkpoint_utils, training_util
from flowgraph.train.saver import Saver

log = logging.getLogger("tensorflow")

__all__ = [
    "VariableDeviceChooser",
    "add_model_variable",
    "assert_global_step",
    "assert_or_get_global_step",
    "assign_from_checkpoint",
    "assign_from_checkpoint_fn",
    "assign_from_values",
    "assign_from_values_fn",
    "create_global_step",
    "filter_variables",
    "get_global_step",
    "get_local_variables",
    "get_model_variables",
    "get_or_create_global_step",
    "get_trainable_variables",
    "get_unique_variable",
    "get_variable_full_name",
    "get_variables",
    "get_variables_by_name",
    "get_variables_by_suffix",
    "get_variables_to_restore",
    "global_variable",
    "local_variable",
    "model_variable",
    "variable",
]

create_global_step = training_util.create_global_step
get_global_step = training_util.get_global_step
get_or_create_global_step = training_util.get_or_create_global_step
assert_global_step = training_util.assert_global_step


def assert_or_get_global_step(graph=None, global_step_tensor=None):
    """`global_step_tensor` checked to be a global step, or the graph's global step (None
    when it has none)."""
    if global_step_tensor is None:
        return get_global_step(graph)
    assert_global_step(global_step_tensor)
    return global_step_tensor


@add_arg_scope
def variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
             trainable: bool = True, collections=None, caching_device=None, device=None,
             partitioner=None, custom_getter=None, use_resource=None, **kwargs):
    """`tf.get_variable` in `collections` (default: the global variables), on `device`
    when given, through `custom_getter` when given."""
    del kwargs  # synchronization / aggregation: one replica
    cols = list(dict.fromkeys(collections or [GraphKeys.GLOBAL_VARIABLES]))
    getter = vs.get_variable
    if custom_getter is not None:
        def getter(name, **kw):
            return custom_getter(vs.get_variable, name, **kw)
    with _device_scope(device):
        return getter(name, shape=shape, dtype=dtype, initializer=initializer,
                      regularizer=regularizer, trainable=trainable, collections=cols,
                      caching_device=caching_device, partitioner=partitioner,
                      use_resource=use_resource)


def _device_scope(name):
    return device(name or "")


@add_arg_scope
def model_variable(name, shape=None, dtype=dtypes.float32, initializer=None,
                   regularizer=None, trainable: bool = True, collections=None,
                   caching_device=None, device=None, partitioner=None, custom_getter=None,
                   use_resource=None, **kwargs):
    """`variable` also filed under ``GraphKeys.MODEL_VARIABLES`` (the variables a model
    restores; float32 by default)."""
    cols = [*(collections or ()), GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    return variable(name, shape=shape, dtype=dtype, initializer=initializer,
                    regularizer=regularizer, trainable=trainable, collections=cols,
                    caching_device=caching_device, device=device, partitioner=partitioner,
                    custom_getter=custom_getter, use_resource=use_resource, **kwargs)


def local_variable(initial_value, validate_shape: bool = True, name=None, use_resource=None):
    """A non-trainable variable in ``GraphKeys.LOCAL_VARIABLES``."""
    return variables_lib.Variable(initial_value, trainable=False,
                                  collections=[GraphKeys.LOCAL_VARIABLES],
                                  validate_shape=validate_shape, name=name,
                                  use_resource=use_resource)


def global_variable(initial_value, validate_shape: bool = True, name=None, use_resource=None):
    """A non-trainable variable in ``GraphKeys.GLOBAL_VARIABLES``."""
    return variables_lib.Variable(initial_value, trainable=False,
                                  collections=[GraphKeys.GLOBAL_VARIABLES],
                                  validate_shape=validate_shape, name=name,
                                  use_resource=use_resource)


def add_model_variable(var) -> None:
    """File `var` under ``GraphKeys.MODEL_VARIABLES`` (once)."""
    if var not in get_collection_ref(GraphKeys.MODEL_VARIABLES):
        add_to_collection(GraphKeys.MODEL_VARIABLES, var)


def get_variables(scope=None, suffix=None, collection=GraphKeys.GLOBAL_VARIABLES) -> list:
    """The variables of `collection` whose names match `scope` (a regular expression at
    the name's start, or a `VariableScope`) and, with `suffix`, end in it."""
    if isinstance(scope, vs.VariableScope):
        scope = scope.name
    if suffix is not None:
        scope = (scope or "") + ".*" + suffix
    return get_collection(collection, scope)


def get_model_variables(scope=None, suffix=None) -> list:
    """`get_variables` over ``GraphKeys.MODEL_VARIABLES``."""
    return get_variables(scope, suffix, GraphKeys.MODEL_VARIABLES)


def get_local_variables(scope=None, suffix=None) -> list:
    """`get_variables` over ``GraphKeys.LOCAL_VARIABLES``."""
    return get_variables(scope, suffix, GraphKeys.LOCAL_VARIABLES)


def get_trainable_variables(scope=None, suffix=None) -> list:
    """`get_variables` over ``GraphKeys.TRAINABLE_VARIABLES``."""
    return get_variables(scope, suffix, GraphKeys.TRAINABLE_VARIABLES)


def get_variables_to_restore(include=None, exclude=None) -> list:
    """The global variables under the scopes in `include` (default: all), less those
    under the scopes in `exclude`, in collection order per included scope.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="logits/b")
    ...     [v.op.name for v in get_variables_to_restore(exclude=["logits"])]
    ['a']
    """
    if include is None:
        candidates = get_variables()
    else:
        if not isinstance(include, list | tuple):
            raise TypeError("include is provided but is not a list or a tuple.")
        candidates = [v for scope in include for v in get_variables(scope)]
    if exclude is not None and not isinstance(exclude, list | tuple):
        raise TypeError("exclude is provided but is not a list or a tuple.")
    excluded = {id(v) for scope in exclude or () for v in get_variables(scope)}
    return [v for v in candidates if id(v) not in excluded]


def get_variables_by_suffix(suffix, scope=None) -> list:
    """The global variables (under `scope`) whose names end in `suffix`."""
    return get_variables(scope=scope, suffix=suffix)


def get_variables_by_name(given_name, scope=None) -> list:
    """The global variables (under `scope`) whose last name component is `given_name`."""
    suffix = f"/{given_name}:|^{given_name}:"
    return get_variables(scope=scope, suffix=suffix)


def get_unique_variable(var_op_name):
    """The one variable whose op is named `var_op_name` (ValueError if none)."""
    candidates = get_variables(scope=var_op_name)
    if not candidates:
        raise ValueError(f"Couldn't find variable {var_op_name}")
    for candidate in candidates:
        if candidate.op.name == var_op_name:
            return candidate
    raise ValueError(f"Variable {var_op_name} does not uniquely identify a variable")


def get_variable_full_name(var) -> str:
    """The name `var` is saved under: its partitioned variable's for a part, else its
    op's name."""
    info = getattr(var, "_save_slice_info", None)
    return info.full_name if info is not None else var.op.name


def filter_variables(var_list, include_patterns=None, exclude_patterns=None,
                     reg_search: bool = True) -> list:
    """The variables of `var_list` whose names match one of `include_patterns` (all when
    None) and none of `exclude_patterns`; patterns are regular expressions searched in
    the name (matched at its start with ``reg_search=False``)."""
    find = re.search if reg_search else re.match
    chosen = list(var_list)
    if include_patterns is not None:
        chosen = [v for v in chosen if any(find(p, v.name) for p in include_patterns)]
    if exclude_patterns is not None:
        chosen = [v for v in chosen if not any(find(p, v.name) for p in exclude_patterns)]
    return chosen


def _named(var_list) -> dict:
    """``{checkpoint name: variable}`` of a list (names from `get_variable_full_name`) or a
    dict (a list of parts under one name becomes the parts)."""
    if isinstance(var_list, dict):
        return dict(var_list)
    if not isinstance(var_list, list | tuple):
        raise TypeError(f"var_list must be a list or a dict, got {type(var_list).__name__}")
    return {get_variable_full_name(v): v for v in var_list}


def assign_from_values(var_names_to_values: dict):
    """``(assign_op, feed_dict)`` assigning each named variable its value through a
    placeholder (values are fed, so large arrays stay out of the graph)."""
    assigns, feed = [], {}
    for var_name in sorted(var_names_to_values):
        value = var_names_to_values[var_name]
        var = get_variables(var_name)
        if not var:
            raise ValueError(f"Variable {var_name} wasn't found")
        if len(var) > 1:
            found = [v for v in var if v.op.name == var_name]
            if len(found) != 1:
                raise ValueError(f"Ambiguous specification {var_name}: matches "
                                 f"{[v.op.name for v in var]}")
            var = found
        var = var[0]
        placeholder = array_ops.placeholder(var.dtype.base_dtype, shape=var.get_shape(),
                                            name=f"placeholder/{var.op.name}")
        assigns.append(state_ops.assign(var, placeholder))
        feed[placeholder] = value.reshape(var.get_shape().as_list()) \
            if hasattr(value, "reshape") else value
    return control_flow_ops.group(*assigns), feed


def assign_from_values_fn(var_names_to_values: dict):
    """A ``callback(session)`` doing `assign_from_values`' assignment."""
    assign_op, feed = assign_from_values(var_names_to_values)

    def callback(session):
        return session.run(assign_op, feed)

    return callback


def assign_from_checkpoint(model_path, var_list, ignore_missing_vars: bool = False):
    """``(assign_op, feed_dict)`` loading the variables of `var_list` (a list, or a dict
    ``{checkpoint name: variable or list of partitions}``) from the checkpoint
    `model_path`; checkpoint entries missing are skipped with a warning when
    `ignore_missing_vars`, else a ValueError."""
    reader = checkpoint_utils.CheckpointReader(model_path)
    assigns, feed = [], {}
    for ckpt_name, var in _named(var_list).items():
        if not reader.has_tensor(ckpt_name):
            if ignore_missing_vars:
                log.warning("Variable %s missing in checkpoint %s", ckpt_name, model_path)
                continue
            raise ValueError(f"Checkpoint is missing variable [{ckpt_name}]")
        value = reader.get_tensor(ckpt_name)
        parts = var if isinstance(var, list | tuple) else [var]
        for part in parts:
            info = getattr(part, "_save_slice_info", None)
            part_value = value
            if info is not None and len(parts) > 1:
                part_value = value[tuple(slice(o, o + n) for o, n in
                                         zip(info.var_offset, info.var_shape))]
            placeholder = array_ops.placeholder(part.dtype.base_dtype,
                                                shape=part.get_shape(),
                                                name=f"placeholder/{part.op.name}")
            assigns.append(state_ops.assign(part, placeholder))
            feed[placeholder] = part_value.reshape(part.get_shape().as_list())
    return control_flow_ops.group(*assigns), feed


def assign_from_checkpoint_fn(model_path, var_list, ignore_missing_vars: bool = False,
                              reshape_variables: bool = False):
    """A ``callback(session)`` restoring `var_list` from the checkpoint `model_path` with
    a `Saver` (None when `ignore_missing_vars` leaves nothing to restore), as slim's
    fine-tuning ``init_fn``.

    >>> import os, tempfile, flowgraph as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "model.ckpt")
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     v = tf.Variable(3.0, name="v")
    ...     sess.run(v.initializer)
    ...     _ = tf.train.Saver().save(sess, path)
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     v = tf.Variable(0.0, name="v")
    ...     assign_from_checkpoint_fn(path, [v])(sess)
    ...     float(sess.run(v))
    3.0
    """
    if not var_list:
        raise ValueError("var_list cannot be empty")
    if ignore_missing_vars:
        reader = checkpoint_utils.CheckpointReader(model_path)
        named = _named(var_list)
        kept = {}
        for name, var in named.items():
            if reader.has_tensor(name):
                kept[name] = var
            else:
                log.warning("Variable %s missing in checkpoint %s", name, model_path)
        var_list = kept
    if not var_list:
        log.warning("No Variables to restore")
        return None
    saver = Saver(var_list, reshape=reshape_variables)

    def callback(session):
        saver.restore(session, model_path)

    return callback


class VariableDeviceChooser:
    """A device function placing each op it is asked about on the next of `num_tasks`
    tasks of `job_name` (round-robin; the local device without tasks), given as the
    ``device`` of slim's `variable` / `model_variable` (e.g. through an `arg_scope`).

    >>> chooser = VariableDeviceChooser(num_tasks=2)
    >>> chooser(None), chooser(None), chooser(None)
    ('/job:ps/task:0/device:CPU:0', '/job:ps/task:1/device:CPU:0', '/job:ps/task:0/device:CPU:0')
    """

    def __init__(self, num_tasks: int = 0, job_name: str = "ps", device_type: str = "CPU",
                 device_index: int = 0, replica=None) -> None:
        self._job_name = job_name
        self._device_type = device_type
        self._device_index = device_index
        self._replica = replica
        self._num_tasks = num_tasks
        self._next_task_id = 0

    def __call__(self, op) -> str:
        parts = []
        if self._num_tasks > 0:
            parts.append(f"/job:{self._job_name}")
        if self._replica is not None:
            parts.append(f"/replica:{self._replica}")
        if self._num_tasks > 0:
            parts.append(f"/task:{self._next_task_id}")
            self._next_task_id = (self._next_task_id + 1) % self._num_tasks
        if self._device_type:
            parts.append(f"/device:{self._device_type}:{self._device_index}")
        return "".join(parts)
