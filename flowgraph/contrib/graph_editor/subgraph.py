"""`SubGraphView`: a set of ops seen with its boundary (input and output tensors).

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.contrib import graph_editor as ge
>>> with tf.Graph().as_default():
...     a = tf.placeholder(tf.float32, name="a")
...     b = tf.identity(a, name="b")
...     c = tf.identity(b, name="c")
>>> view = ge.sgv(b.op, c.op)
>>> [t.name for t in view.inputs], [t.name for t in view.outputs]
(['a:0'], ['c:0'])
"""

from __future__ import annotations

import copy as _copy

from flowgraph.contrib.graph_editor import select, util
from flowgraph.framework.graph import Graph, get_default_graph
from flowgraph.framework.operation import Operation

__all__ = ["SubGraphView", "make_view", "make_view_from_scope"]


def _check_index(what: str, index, n: int) -> int:
    if not isinstance(index, int) or not -n <= index < n:
        raise IndexError(f"SubGraphView: {what} index {index!r} out of range (the view has "
                         f"{n})")
    return index


class SubGraphView:
    """Ops `inside_ops` and tensors `passthrough_ts` (tensors that go through the view
    untouched), with the view's inputs and outputs in a fixed, remappable order."""

    def __init__(self, inside_ops=(), passthrough_ts=()) -> None:
        inside_ops = util.make_list_of_op(inside_ops)
        passthrough_ts = util.make_list_of_t(passthrough_ts)
        everything = inside_ops + passthrough_ts
        if everything:
            self._graph = util.get_unique_graph(everything)
            self._ops = inside_ops
            inputs, outputs, insides = select.compute_boundary_ts(inside_ops)
            known = frozenset(inputs + outputs + list(insides))
            self._passthrough_ts = [t for t in passthrough_ts if t not in known]
            self._input_ts = inputs + self._passthrough_ts
            self._output_ts = outputs + self._passthrough_ts
        else:
            self._graph = None
            self._passthrough_ts = []
            self._input_ts = []
            self._output_ts = []
            self._ops = []

    def __copy__(self) -> SubGraphView:
        cls = self.__class__
        result = cls.__new__(cls)
        result._graph = self._graph
        result._ops = list(self._ops)
        result._passthrough_ts = list(self._passthrough_ts)
        result._input_ts = list(self._input_ts)
        result._output_ts = list(self._output_ts)
        return result

    def copy(self) -> SubGraphView:
        """A shallow copy (its own lists, the same ops and tensors)."""
        return _copy.copy(self)

    # -- remapping --------------------------------------------------------------------
    def _remap_default(self, remove_input_map=True, remove_output_map=True) -> None:
        if not remove_input_map and not remove_output_map:
            return
        inputs, outputs, _ = select.compute_boundary_ts(self._ops)
        if remove_input_map:
            self._input_ts = list(inputs) + self._passthrough_ts
        if remove_output_map:
            self._output_ts = list(outputs) + self._passthrough_ts

    def remap_default(self, remove_input_map=True, remove_output_map=True) -> SubGraphView:
        """A copy with the inputs and/or outputs back in their default order."""
        res = self.copy()
        res._remap_default(remove_input_map, remove_output_map)
        return res

    def _remap_inputs(self, new_input_indices) -> None:
        n = len(self._input_ts)
        self._input_ts = [self._input_ts[_check_index("input", i, n)]
                          for i in new_input_indices]

    def _remap_outputs(self, new_output_indices) -> None:
        n = len(self._output_ts)
        self._output_ts = [self._output_ts[_check_index("output", i, n)]
                           for i in new_output_indices]

    def remap_inputs(self, new_input_indices) -> SubGraphView:
        """A copy whose inputs are ``[inputs[i] for i in new_input_indices]``."""
        res = self.copy()
        res._remap_inputs(new_input_indices)
        return res

    def remap_outputs(self, new_output_indices) -> SubGraphView:
        """A copy whose outputs are ``[outputs[i] for i in new_output_indices]``."""
        res = self.copy()
        res._remap_outputs(new_output_indices)
        return res

    def remap_outputs_make_unique(self) -> SubGraphView:
        """A copy without repeated outputs."""
        res = self.copy()
        res._output_ts = list(dict.fromkeys(res._output_ts))
        return res

    def remap_outputs_to_consumers(self) -> SubGraphView:
        """A copy whose outputs are repeated once per consumer (uniquely first)."""
        res = self.remap_outputs_make_unique()
        outputs: list = []
        for t in res._output_ts:
            outputs.extend([t] * max(1, len(t.consumers())))
        res._output_ts = outputs
        return res

    def remap(self, new_input_indices=None, new_output_indices=None) -> SubGraphView:
        """A copy with inputs and outputs remapped (None: unchanged)."""
        res = self.copy()
        if new_input_indices is not None:
            res._remap_inputs(new_input_indices)
        if new_output_indices is not None:
            res._remap_outputs(new_output_indices)
        return res

    # -- queries ----------------------------------------------------------------------
    def find_op_by_name(self, op_name: str) -> Operation:
        """The op of the view named `op_name` (ValueError if none)."""
        for op in self._ops:
            if op.name == op_name:
                return op
        raise ValueError(f"{op_name} not in subgraph.")

    def is_passthrough(self, t) -> bool:
        return t in self._passthrough_ts

    def input_index(self, t) -> int:
        """The index of tensor `t` among the inputs (ValueError if not one)."""
        try:
            return self._input_ts.index(t)
        except ValueError:
            raise ValueError(f"Can't find {t.name} in inputs of subgraph "
                             f"{self.name}.") from None

    def output_index(self, t) -> int:
        """The index of tensor `t` among the outputs (ValueError if not one)."""
        try:
            return self._output_ts.index(t)
        except ValueError:
            raise ValueError(f"Can't find {t.name} in outputs of subgraph "
                             f"{self.name}.") from None

    def consumers(self) -> list:
        """The ops outside the view that consume its outputs."""
        ops_set = frozenset(self._ops)
        res: list = []
        for t in self._output_ts:
            util.concatenate_unique(res, [op for op in t.consumers() if op not in ops_set])
        return res

    def op(self, op_id: int) -> Operation:
        return self._ops[op_id]

    @property
    def graph(self) -> Graph | None:
        return self._graph

    @property
    def ops(self) -> tuple:
        return tuple(self._ops)

    @property
    def inputs(self) -> tuple:
        return tuple(self._input_ts)

    @property
    def connected_inputs(self) -> list:
        """The inputs that are not passthroughs."""
        return [t for t in self._input_ts if t not in self._passthrough_ts]

    @property
    def outputs(self) -> tuple:
        return tuple(self._output_ts)

    @property
    def connected_outputs(self) -> list:
        """The outputs that are not passthroughs."""
        return [t for t in self._output_ts if t not in self._passthrough_ts]

    @property
    def passthroughs(self) -> tuple:
        return tuple(self._passthrough_ts)

    @property
    def name(self) -> str:
        return f"SubGraphView{id(self)}"

    def __bool__(self) -> bool:
        return self._graph is not None

    __nonzero__ = __bool__

    def __len__(self) -> int:
        return len(self._ops)

    def __enter__(self) -> SubGraphView:
        return self

    def __exit__(self, *exc) -> None:
        pass

    def __str__(self) -> str:
        if not self:
            return "SubGraphView: empty"
        lines = [f"** {self.name}:"]
        lines.append(f"** ops[{len(self._ops)}]:")
        lines += [f"  {op.name}" for op in self._ops]
        lines.append(f"** inputs[{len(self._input_ts)}]:")
        lines += [f"  {t.name}" for t in self._input_ts]
        lines.append(f"** outputs[{len(self._output_ts)}]:")
        lines += [f"  {t.name}" for t in self._output_ts]
        return "\n".join(lines)

    __repr__ = __str__


def _check_graph(sgv, graph):
    if not isinstance(sgv, SubGraphView):
        raise TypeError(f"Expected a SubGraphView, got {type(sgv).__name__}")
    if graph is None or not sgv.graph:
        return sgv
    if not isinstance(graph, Graph):
        raise TypeError(f"Expected a tf.Graph, got {type(graph).__name__}")
    if sgv.graph is not graph:
        raise ValueError("Graph mismatch.")
    return sgv


def make_view(*args, **kwargs) -> SubGraphView:
    """A `SubGraphView` of the ops selected by the arguments (see `select_ops_and_ts`:
    ops, tensors as passthroughs, regexes, a graph), or the view given itself.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default() as g:
    ...     _ = tf.identity(tf.constant(1.0, name="a"), name="b")
    >>> [op.name for op in make_view("^b$", graph=g).ops]
    ['b']
    """
    graph = kwargs.get("graph")
    if len(args) == 1 and isinstance(args[0], SubGraphView):
        return _check_graph(args[0], graph)
    ops, ts = select.select_ops_and_ts(*args, **kwargs)
    return _check_graph(SubGraphView(ops, ts), graph)


def make_view_from_scope(scope: str, graph=None) -> SubGraphView:
    """A `SubGraphView` of the ops in name scope `scope` of `graph` (default graph)."""
    graph = graph if graph is not None else get_default_graph()
    return SubGraphView(select.get_name_scope_ops(graph, scope))

