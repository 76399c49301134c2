"""`tf.train.Checkpoint`: object-based checkpoints, as TensorFlow 1.x programs use them in
graph mode (every call that reads or writes variables takes a session, or uses the
default one).

A checkpoint stores each variable under the path of attribute names that reaches it
from the `Checkpoint` (``model/kernel/.ATTRIBUTES/VARIABLE_VALUE``; the walk and the key
rules are in `flowgraph.train.checkpoint_object_graph`), so it restores into any program
that builds the same objects, whatever its variables' graph names. Files are written in
TensorFlow's tensor-bundle format (``PREFIX.index`` and ``PREFIX.data-00000-of-00001``,
atomically: data first, index last) with TensorFlow's object graph beside the values,
so TensorFlow's ``tf.train.Checkpoint`` restores them and flowgraph restores TensorFlow's.

A name-based checkpoint (one `tf.train.Saver` wrote) restores by the variables' graph
names instead, as in TensorFlow; `assert_consumed` then always fails.

`restore` returns a status object; nothing is read into the variables until
``status.run_restore_ops(session)`` (or ``initialize_or_restore``), which matches the
objects that exist at that moment. The ``assert_*`` methods compare the checkpoint's
keys with the objects.

Example
-------
>>> import os, tempfile, flowgraph as tf
>>> d = tempfile.mkdtemp()
>>> with tf.Graph().as_default():
...     v = tf.Variable([1.0, 2.0], name="v")
...     ckpt = tf.train.Checkpoint(v=v)
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         path = ckpt.save(os.path.join(d, "ckpt"), session=sess)
...         _ = sess.run(v.assign([0.0, 0.0]))
...         ckpt.restore(path).assert_consumed().run_restore_ops(sess)
...         print(os.path.basename(path), sess.run(v))
ckpt-1 [1. 2.]
"""

from __future__ import annotations

import os

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.checkpoint_file import CheckpointReader
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.session_stack import get_default_session
from flowgraph.framework.tf_formats.bundle import bundle_files
from flowgraph.ops.variables import Variable, is_variable_initialized
from flowgraph.train import checkpoint_state as _state
from flowgraph.train.checkpoint_object_graph import (
    OBJECT_GRAPH_KEY,
    build_object_graph,
    is_trackable,
    serialize_object_graph,
    variable_keys,
)

__all__ = ["Checkpoint", "CheckpointLoadStatus", "InitializationOnlyStatus"]

_COUNTER = "save_counter"
_COUNTER_KEY = _COUNTER + "/.ATTRIBUTES/VARIABLE_VALUE"


def session_for(session, what: str):
    """`session`, else the default session, else a ValueError naming `what`."""
    session = session if session is not None else get_default_session()
    if session is None:
        raise ValueError(
            f"tf.train.Checkpoint.{what}: in graph mode it needs a session to read or write "
            f"the variables: pass session=sess or call it inside `with tf.Session() as "
            f"sess:` (or `with sess.as_default():`).")
    return session


class Checkpoint:
    """Groups trackable objects (variables, optimizers, Keras layers and models, other
    Checkpoints, `tf.Module`s) for saving and restoring by their attribute paths.

    Parameters
    ----------
    **kwargs
        The objects to track, by name (``model=model, optimizer=opt``). Attributes set
        later on the Checkpoint (``ckpt.step = step``) are tracked too.

    Example
    -------
    >>> import os, tempfile, flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     ckpt = tf.train.Checkpoint(w=tf.Variable(3.0, name="w"))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         p = ckpt.save(os.path.join(tempfile.mkdtemp(), "c"), session=sess)
    ...         print(sorted(k for k, _ in tf.train.list_variables(p)))
    ['_CHECKPOINTABLE_OBJECT_GRAPH', 'save_counter/.ATTRIBUTES/VARIABLE_VALUE', \
'w/.ATTRIBUTES/VARIABLE_VALUE']
    """

    def __init__(self, **kwargs) -> None:
        object.__setattr__(self, "_order", [])
        object.__setattr__(self, "_counter", None)
        object.__setattr__(self, "_ops", {})
        for name, value in sorted(kwargs.items()):
            if not is_trackable(value):
                raise ValueError(
                    f"`Checkpoint` was expecting a trackable object (a variable, optimizer, "
                    f"Keras layer or model, tf.Module or Checkpoint), got {value!r} for "
                    f"'{name}'.")
            setattr(self, name, value)

    def __setattr__(self, name: str, value) -> None:
        object.__setattr__(self, name, value)
        if not name.startswith("_") and name not in self._order:
            self._order.append(name)

    def _checkpoint_children(self) -> list:
        out = [(n, getattr(self, n)) for n in self._order
               if is_trackable(getattr(self, n, None))]
        if self._counter is not None:
            out.append((_COUNTER, self._counter))
        return out

    # -- the save counter ------------------------------------------------------------------
    @property
    def save_counter(self) -> Variable:
        """The number of `save` calls, an int64 variable created on first use (it is
        saved with the checkpoint and restored from it)."""
        if self._counter is None:
            object.__setattr__(self, "_counter", Variable(
                0, dtype=_dtypes.int64, name=_COUNTER, trainable=False))
        return self._counter

    def _cached(self, key, make):
        ops = self._ops
        if key not in ops:
            ops[key] = make()
        return ops[key]

    def _next_save_number(self, sess) -> int:
        counter = self.save_counter
        with counter.op.graph.as_default():
            ready = self._cached("ready", lambda: is_variable_initialized(counter))
            bump = self._cached("bump", lambda: counter.assign_add(1))
        if not sess.run(ready):
            sess.run(counter.initializer)
        return int(sess.run(bump))

    # -- saving ----------------------------------------------------------------------------
    def write(self, file_prefix: str, session=None) -> str:
        """Write the tracked variables' values to checkpoint `file_prefix` (no counter, no
        ``checkpoint`` state file); returns `file_prefix`.

        Example
        -------
        >>> import os, tempfile, flowgraph as tf
        >>> with tf.Graph().as_default():
        ...     ckpt = tf.train.Checkpoint(w=tf.Variable(3.0, name="w"))
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         p = ckpt.write(os.path.join(tempfile.mkdtemp(), "w"))
        ...     print(tf.train.load_variable(p, "w/.ATTRIBUTES/VARIABLE_VALUE"))
        3.0
        """
        sess = session_for(session, "write")
        file_prefix = os.fspath(file_prefix)
        _state.write_durably(self._files(file_prefix, sess))
        return file_prefix

    def _files(self, file_prefix: str, sess) -> list:
        """``[(path, bytes)]`` of checkpoint `file_prefix` holding the current values."""
        graph = build_object_graph(self)
        keys = variable_keys(graph)
        values = sess.run([var.value() for _, var in keys]) if keys else []
        tensors = {key: np.asarray(value) for (key, _), value in zip(keys, values)}
        tensors[OBJECT_GRAPH_KEY] = np.array(serialize_object_graph(graph), dtype=object)
        parent = os.path.dirname(file_prefix) or "."
        os.makedirs(parent, exist_ok=True)
        _state.remove_stale_temps(parent)
        return bundle_files(file_prefix, tensors)

    def save(self, file_prefix: str, session=None) -> str:
        """Add one to `save_counter` and write checkpoint ``file_prefix-N`` (N its new
        value); records it as the directory's latest checkpoint (the ``checkpoint`` state
        file that `tf.train.latest_checkpoint` reads). Returns the path.

        Example
        -------
        >>> import os, tempfile, flowgraph as tf
        >>> d = tempfile.mkdtemp()
        >>> with tf.Graph().as_default():
        ...     ckpt = tf.train.Checkpoint(w=tf.Variable(3.0, name="w"))
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         paths = [ckpt.save(os.path.join(d, "c")) for _ in range(2)]
        ...     print([os.path.basename(p) for p in paths],
        ...           os.path.basename(tf.train.latest_checkpoint(d)))
        ['c-1', 'c-2'] c-2
        """
        sess = session_for(session, "save")
        number = self._next_save_number(sess)
        path = f"{os.fspath(file_prefix)}-{number}"
        files = self._files(path, sess)
        # The state file naming it is renamed after the checkpoint's files are durable,
        # all of them fsynced together (`checkpoint_state.write_durably`).
        _state.write_durably(files, then=[_state.checkpoint_state_file(
            os.path.dirname(path) or ".", path, all_model_checkpoint_paths=[path])])
        return path

    # -- restoring -------------------------------------------------------------------------
    def restore(self, save_path):
        """A status object for restoring checkpoint `save_path` (a prefix that `save` or
        `write` returned, or ``tf.train.latest_checkpoint(dir)``); ``None`` gives a status
        that only initializes. Raises NotFoundError when the checkpoint does not exist.
        Run ``status.run_restore_ops(sess)`` to read the values into the variables.

        Example
        -------
        >>> import os, tempfile, flowgraph as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable(3.0, name="w")
        ...     ckpt = tf.train.Checkpoint(w=w)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         p = ckpt.write(os.path.join(tempfile.mkdtemp(), "w"))
        ...         _ = sess.run(w.assign(0.0))
        ...         status = ckpt.restore(p)
        ...         status.run_restore_ops()
        ...         print(sess.run(w))
        3.0
        """
        if save_path is None:
            return InitializationOnlyStatus(self)
        return CheckpointLoadStatus(self, CheckpointReader(os.fspath(save_path)))

    read = restore


class _Status:
    def __init__(self, root) -> None:
        self._root = root

    def expect_partial(self):
        """Silence the warnings about unused checkpoint values; returns the status."""
        return self

    def _variables(self):
        return [var for _, var in variable_keys(build_object_graph(self._root))]


class InitializationOnlyStatus(_Status):
    """What ``Checkpoint.restore(None)`` returns: restoring does nothing,
    `initialize_or_restore` runs the tracked variables' initializers."""

    def _nothing(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being "
                             "restored.")

    def assert_consumed(self):
        self._nothing()

    def assert_existing_objects_matched(self):
        self._nothing()

    def assert_nontrivial_match(self):
        self._nothing()

    def run_restore_ops(self, session=None) -> None:
        """Nothing to restore."""

    def initialize_or_restore(self, session=None) -> None:
        """Run the initializers of every variable the Checkpoint tracks."""
        sess = session_for(session, "restore(None).initialize_or_restore")
        variables = self._variables()
        if variables:
            sess.run([v.initializer for v in variables])


class CheckpointLoadStatus(_Status):
    """What ``Checkpoint.restore(path)`` returns. Objects are matched with the
    checkpoint's keys each time a method runs, so variables created after `restore` (an
    optimizer's slots made by ``minimize``) are restored too."""

    def __init__(self, root, reader) -> None:
        super().__init__(root)
        self._reader = reader
        # A tf.train.Saver checkpoint has no object graph: its keys are graph names
        self._by_name = not reader.has_tensor(OBJECT_GRAPH_KEY)
        if reader.has_tensor(_COUNTER_KEY) and root._counter is None:
            with get_default_graph().as_default():
                root.save_counter  # noqa: B018  (created so that it is restored too)

    def _match(self):
        keys = variable_keys(build_object_graph(self._root))
        if self._by_name:
            keys = [(var.op.name, var) for _, var in keys]
        shapes = self._reader.get_variable_to_shape_map()
        found = [(k, v) for k, v in keys if k in shapes]
        missing = [(k, v) for k, v in keys if k not in shapes]
        used = {k for k, _ in found}
        unused = sorted(k for k in shapes if k not in used and k != OBJECT_GRAPH_KEY)
        return found, missing, unused

    def assert_consumed(self):
        """Raise AssertionError unless every checkpoint value has an object and every
        tracked variable a value; returns the status."""
        if self._by_name:
            raise AssertionError(
                f"{self._reader.path} is a name-based checkpoint (tf.train.Saver): the "
                f"object-based restore matched variables by their graph names, which it "
                f"cannot check. Save it again with Checkpoint.save to get object keys.")
        _, missing, unused = self._match()
        if unused:
            raise AssertionError(
                f"Unresolved object in checkpoint {self._reader.path}: {len(unused)} value(s) "
                f"have no matching object in the Checkpoint: {', '.join(unused[:10])}. "
                f"Build those objects first, or call expect_partial() and skip this check.")
        self._assert_matched(missing)
        return self

    def assert_existing_objects_matched(self):
        """Raise AssertionError unless every tracked variable has a value in the
        checkpoint (the checkpoint may hold more); returns the status."""
        self._assert_matched(self._match()[1])
        return self

    def assert_nontrivial_match(self):
        """Raise AssertionError if no tracked variable matches the checkpoint."""
        if not self._match()[0]:
            raise AssertionError(f"Nothing of the Checkpoint matches checkpoint "
                                 f"{self._reader.path}: no key is shared.")
        return self

    def _assert_matched(self, missing) -> None:
        if missing:
            names = ", ".join(f"{v.op.name} ({k})" for k, v in missing[:10])
            raise AssertionError(
                f"Object(s) not assigned a value from checkpoint {self._reader.path}: "
                f"{names}. The checkpoint was written by a program with other objects or "
                f"attribute names.")

    def run_restore_ops(self, session=None) -> None:
        """Read the matched values into their variables in `session` (default: the
        default session). Raises InvalidArgumentError when a value's shape or dtype does
        not fit its variable."""
        sess = session_for(session, "restore(...).run_restore_ops")
        found, _, _ = self._match()
        if not found:
            return
        feed = {}
        for key, var in found:
            value = self._reader.get_tensor(key)
            dtype = var.dtype.base_dtype
            if not var.shape.is_compatible_with(np.shape(value)):
                raise errors.InvalidArgumentError(
                    None, None,
                    f"Checkpoint restore: variable '{var.op.name}' has shape {var.shape} but "
                    f"checkpoint {self._reader.path} holds shape {list(np.shape(value))} "
                    f"for it under '{key}'.")
            if _dtypes.as_dtype(np.asarray(value).dtype) != dtype and dtype != _dtypes.string:
                raise errors.InvalidArgumentError(
                    None, None,
                    f"Checkpoint restore: variable '{var.op.name}' is {dtype.name} but "
                    f"checkpoint {self._reader.path} holds {np.asarray(value).dtype} under "
                    f"'{key}'.")
            feed[var.initial_value] = value
        sess.run([var.initializer for _, var in found], feed_dict=feed)

    def initialize_or_restore(self, session=None) -> None:
        """`run_restore_ops`, then run the initializers of the tracked variables the
        checkpoint has no value for."""
        sess = session_for(session, "restore(...).initialize_or_restore")
        self.run_restore_ops(sess)
        _, missing, _ = self._match()
        if missing:
            sess.run([var.initializer for _, var in missing])
