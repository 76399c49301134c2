"""``tf.GradientTape`` in graph mode, as TensorFlow 1.x runs it in a graph.

flowgraph builds graphs, so a tape records no values: it records which ops were created
while it was recording, and `GradientTape.gradient` builds the gradient ops with
`tf.gradients` over those ops only, as TensorFlow's tape does in a graph:

- An op is *recorded* when it was created while the tape was recording (not under
  `stop_recording`) and one of its inputs is *watched* (`watch`, or a variable read
  while recording) or is an output of a recorded op.
- Gradients flow back through recorded ops only: every other tensor a recorded op
  reads is a constant for the tape (``tf.gradients``' ``stop_gradients``), so a value
  computed before the tape, or under `stop_recording`, is not differentiated through.
- A source that is neither watched nor an output of a recorded op gets None (or zeros,
  with ``unconnected_gradients=tf.UnconnectedGradients.ZERO``).
- A tape that is not ``persistent`` computes one set of gradients (RuntimeError after).

flowgraph's variables are TensorFlow 1's reference variables, which TensorFlow's tape
does not support (it fails on them); here they behave as TensorFlow 2's resource
variables do: read while recording, they are watched.

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant([1.0, 2.0, 3.0])
>>> with tf.GradientTape() as tape:
...     tape.watch(x)
...     y = tf.reduce_sum(x * x)
>>> with tf.Session() as sess:
...     print(sess.run(tape.gradient(y, x)))
[2. 4. 6.]
"""

from __future__ import annotations

import contextlib
import enum

from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.operation import Tensor
from flowgraph.ops import array_ops, gradients
from flowgraph.ops.variables import Variable

__all__ = ["GradientTape", "UnconnectedGradients"]


class UnconnectedGradients(enum.Enum):
    """What `GradientTape.gradient` returns for a source the target does not depend
    on: ``NONE`` (None) or ``ZERO`` (zeros shaped like the source)."""

    NONE = "none"
    ZERO = "zero"


def _flatten(x):
    if isinstance(x, list | tuple):
        out = []
        for item in x:
            out.extend(_flatten(item))
        return out
    if isinstance(x, dict):
        return _flatten([x[k] for k in sorted(x)])
    return [x]


def _pack(structure, flat: list):
    """`flat` arranged as `structure` (a nest of lists, tuples and dicts)."""
    it = iter(flat)

    def build(s):
        if isinstance(s, list | tuple):
            items = [build(v) for v in s]
            if hasattr(s, "_fields"):  # a namedtuple
                return type(s)(*items)
            return tuple(items) if isinstance(s, tuple) else items
        if isinstance(s, dict):
            built = {k: build(s[k]) for k in sorted(s)}
            return {k: built[k] for k in s}
        return next(it)

    return build(structure)


class GradientTape:
    """Record the ops built in a ``with`` block, to differentiate through them.

    Parameters
    ----------
    persistent : bool
        Allow more than one call of `gradient`/`jacobian`.
    watch_accessed_variables : bool
        Watch every variable read while recording (default); with False, only what
        `watch` names.
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = bool(persistent)
        self._watch_accessed = bool(watch_accessed_variables)
        self._graph = None
        self._spans: list[list] = []  # [first op index, end index or None] per span
        self._watched: list = []  # Tensors and Variables, in watch order
        self._used = False

    # -- recording -------------------------------------------------------------------
    def __enter__(self) -> GradientTape:
        graph = get_default_graph()
        if self._graph is not None and self._graph is not graph:
            raise ValueError("GradientTape: this tape recorded another graph; use one tape "
                             "per graph")
        self._graph = graph
        self._start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop()

    def _start(self) -> None:
        self._spans.append([len(self._graph._ops), None])

    def _stop(self) -> None:
        if self._spans and self._spans[-1][1] is None:
            self._spans[-1][1] = len(self._graph._ops)

    @contextlib.contextmanager
    def stop_recording(self):
        """Within this block the tape records nothing (ops built here are constants for
        it)."""
        if not self._spans or self._spans[-1][1] is not None:
            raise RuntimeError("GradientTape.stop_recording: the tape is not recording; "
                               "use it inside the tape's `with` block")
        self._stop()
        try:
            yield
        finally:
            self._start()

    def reset(self) -> None:
        """Forget everything recorded and watched; recording goes on from here."""
        recording = bool(self._spans) and self._spans[-1][1] is None
        self._spans, self._watched, self._used = [], [], False
        if recording:
            self._start()

    def watch(self, tensor) -> None:
        """Watch `tensor` (a Tensor, a Variable, or a nest of them)."""
        for t in _flatten(tensor):
            if isinstance(t, Variable):
                self._watched.append(t)
            elif isinstance(t, Tensor):
                if not t.dtype.base_dtype.is_floating and not t.dtype.base_dtype.is_complex:
                    continue  # TensorFlow does not watch integer tensors either
                self._watched.append(t)
            else:
                raise ValueError(f"GradientTape.watch: {t!r} is not a Tensor or Variable; "
                                 "pass tensors built in the graph (e.g. tf.constant(x))")

    def watched_variables(self) -> tuple:
        """The variables watched, explicitly or by being read while recording."""
        out = [v for v in self._watched if isinstance(v, Variable)]
        if self._watch_accessed:
            reads = self._variable_reads()
            for op in self._window_ops():
                for t in op.inputs:
                    var = reads.get(t)
                    if var is not None and not any(var is v for v in out):
                        out.append(var)
        return tuple(out)

    # -- differentiation -------------------------------------------------------------
    def _window_ops(self) -> list:
        if self._graph is None:
            return []
        ops = self._graph._ops
        out = []
        for start, end in self._spans:
            out.extend(ops[start:len(ops) if end is None else end])
        return out

    def _variable_reads(self) -> dict:
        """Each variable's value and ref tensors -> the variable."""
        from flowgraph.ops.variables import global_variables, local_variables

        graph = self._graph
        with graph.as_default():
            variables = {id(v): v for v in (*global_variables(), *local_variables(),
                                             *(w for w in self._watched
                                               if isinstance(w, Variable)))}
        out = {}
        for v in variables.values():
            for t in (getattr(v, "_variable", None), getattr(v, "_snapshot", None)):
                if t is not None:
                    out[t] = v
        return out

    def _recorded(self):
        """(recorded ops, the tensors they produce, watched tensors, variable reads)."""
        reads = self._variable_reads()
        watched_vars = {id(v) for v in self.watched_variables()}
        watched = {t for t in self._watched if isinstance(t, Tensor)}
        watched |= {t for t, v in reads.items() if id(v) in watched_vars}
        live = set(watched)
        recorded = []
        for op in self._window_ops():
            if any(t in live for t in op.inputs):
                recorded.append(op)
                live.update(op.outputs)
        return recorded, live, reads

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """The gradient of `target` (a Tensor or a nest of them, summed) with respect to
        each of `sources` (Tensors or Variables, any nest), through the recorded ops.

        Returns the gradients arranged as `sources`; None (or zeros, with
        ``unconnected_gradients=UnconnectedGradients.ZERO``) where a source is not
        connected to `target` through the tape.
        """
        unconnected = UnconnectedGradients(
            unconnected_gradients.value if isinstance(unconnected_gradients,
                                                      UnconnectedGradients)
            else unconnected_gradients)
        if self._spans and self._spans[-1][1] is None and not self._persistent:
            # TensorFlow warns here: the gradient ops would be recorded too.
            self._stop()
            try:
                return self.gradient(target, sources, output_gradients, unconnected)
            finally:
                self._start()
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute "
                               "one set of gradients (or jacobians); create the tape with "
                               "persistent=True to call gradient() more than once")
        self._used = True
        targets = _flatten(target)
        flat_sources = _flatten(sources)
        recorded, live, reads = self._recorded()
        produced = {t for op in recorded for t in op.outputs}
        stops = {t for op in recorded for t in op.inputs
                 if t not in produced and t not in reads}
        connected = []
        for s in flat_sources:
            if isinstance(s, Variable):
                tensors = [t for t, v in reads.items() if v is s]
                connected.append(any(t in live for t in tensors))
            elif isinstance(s, Tensor):
                connected.append(s in live)
            else:
                raise ValueError(f"GradientTape.gradient: source {s!r} is not a Tensor or "
                                 "Variable")
        grads = [None] * len(flat_sources)
        wanted = [i for i, c in enumerate(connected) if c]
        if wanted and any(t in produced or t in live for t in targets):
            grad_ys = _flatten(output_gradients) if output_gradients is not None else None
            found = gradients.gradients(
                targets, [flat_sources[i] for i in wanted], grad_ys=grad_ys,
                stop_gradients=[t for t in stops if t not in
                                {flat_sources[i] for i in wanted
                                 if isinstance(flat_sources[i], Tensor)}])
            for i, g in zip(wanted, found):
                grads[i] = g
        if unconnected is UnconnectedGradients.ZERO:
            with self._graph.as_default():
                grads = [array_ops.zeros_like(_value(s)) if g is None else g
                         for s, g in zip(flat_sources, grads)]
        return _pack(sources, grads)

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """The Jacobian of `target` with respect to each of `sources`: shape
        ``target.shape + source.shape``. `target`'s shape must be fully known (one
        gradient is built per element)."""
        shape = target.shape
        if not shape.is_fully_defined():
            raise ValueError(f"GradientTape.jacobian: target '{target.name}' has shape "
                             f"{shape}; flowgraph builds one gradient per element and needs "
                             "a fully known shape (reshape it, or use tf.gradients per "
                             "element)")
        persistent, self._persistent = self._persistent, True
        recording = bool(self._spans) and self._spans[-1][1] is None
        try:
            with self._graph.as_default():
                if not recording:
                    self._start()  # the element slices are part of what is differentiated
                flat = array_ops.reshape(target, [-1])
                size = shape.num_elements()
                elements = [flat[i] for i in range(size)]
                if not recording:
                    self._stop()
                rows = [self.gradient(e, sources, unconnected_gradients=
                                      UnconnectedGradients.ZERO) for e in elements]
        finally:
            self._persistent = persistent
        self._used = True
        flat_sources = _flatten(sources)
        out = []
        with self._graph.as_default():
            for j, s in enumerate(flat_sources):
                cols = [_flatten(r)[j] for r in rows]
                stacked = array_ops.stack([_dense(c) for c in cols]) if cols else None
                s_shape = _value(s).shape.as_list()
                jac = array_ops.reshape(stacked, shape.as_list() + s_shape) \
                    if stacked is not None else None
                if unconnected_gradients in (UnconnectedGradients.NONE, "none") and \
                        all(c is None for c in cols):
                    jac = None
                out.append(jac)
        return _pack(sources, out)


def _value(s):
    return s.value() if isinstance(s, Variable) else s


def _dense(g):
    from flowgraph.framework.indexed_slices import IndexedSlices

    if isinstance(g, IndexedSlices):
        from flowgraph.ops import segment_ops

        return segment_ops.unsorted_segment_sum(g.values, g.indices, g.dense_shape[0])
    return g
