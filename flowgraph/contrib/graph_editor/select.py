"""Selecting ops and tensors: filters, regexes, boundaries and graph walks.

Walks return lists with the seeds first, then each wave of newly reached ops in creation
order (TensorFlow's order within a wave is that of a Python set; flowgraph's is fixed).

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.contrib import graph_editor as ge
>>> with tf.Graph().as_default():
...     a = tf.constant(1.0, name="a")
...     b = tf.identity(a, name="b")
...     c = tf.identity(b, name="c")
>>> [op.name for op in ge.get_forward_walk_ops([a.op])]
['a', 'b', 'c']
"""

from __future__ import annotations

from flowgraph.contrib.graph_editor import util
from flowgraph.framework.graph import Graph, get_default_graph
from flowgraph.framework.operation import Operation, Tensor

__all__ = [
    "check_cios", "compute_boundary_ts", "filter_ops", "filter_ops_from_regex",
    "filter_ts", "filter_ts_from_regex", "get_backward_walk_ops",
    "get_forward_walk_ops", "get_name_scope_ops", "get_ops_ios", "get_walks_intersection_ops",
    "get_walks_union_ops", "get_within_boundary_ops", "select_ops", "select_ops_and_ts",
    "select_ts",
]


def _by_id(ops) -> list:
    return sorted(ops, key=lambda op: op._id)


def filter_ts(ops, positive_filter) -> list:
    """The output tensors of `ops` for which `positive_filter(t)` is true (True: all)."""
    ops = util.make_list_of_op(ops)
    ts = [t for op in ops for t in op.outputs]
    if positive_filter is not True:
        ts = [t for t in ts if positive_filter(t)]
    return ts


def filter_ts_from_regex(ops, regex) -> list:
    """The output tensors of `ops` whose name matches `regex` (``re.search``)."""
    pattern = util.make_regex(regex)
    return filter_ts(ops, lambda t: pattern.search(t.name))


def filter_ops(ops, positive_filter) -> list:
    """The ops of `ops` for which `positive_filter(op)` is true (True: all)."""
    ops = util.make_list_of_op(ops, check_graph=False)
    if positive_filter is not True:
        ops = [op for op in ops if positive_filter(op)]
    return ops


def filter_ops_from_regex(ops, regex) -> list:
    """The ops of `ops` whose name matches `regex` (``re.search``).

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default() as g:
    ...     _ = tf.constant(1.0, name="foo/a"), tf.constant(2.0, name="bar/a")
    >>> [op.name for op in filter_ops_from_regex(g, "^foo/")]
    ['foo/a']
    """
    pattern = util.make_regex(regex)
    return filter_ops(ops, lambda op: pattern.search(op.name))


def get_name_scope_ops(ops, scope: str) -> list:
    """The ops of `ops` in name scope `scope` (the op named `scope` included)."""
    if scope and scope[-1] == "/":
        scope = scope[:-1]
    return filter_ops(ops, lambda op: op.name == scope or op.name.startswith(scope + "/"))


def check_cios(control_inputs=False, control_outputs=None, control_ios=None):
    """Normalise the control-edge options: returns (control_inputs, control_outputs),
    control_outputs a `util.ControlOutputs` or None."""
    if control_ios is not None:
        if not isinstance(control_ios, util.ControlOutputs):
            raise TypeError("control_ios must be None or a util.ControlOutputs")
        return True, control_ios
    if control_outputs is not None and not isinstance(control_outputs, util.ControlOutputs):
        raise TypeError("control_outputs must be None or a util.ControlOutputs")
    return bool(control_inputs), control_outputs


def get_ops_ios(ops, control_inputs=False, control_outputs=None, control_ios=None) -> list:
    """The ops connected to `ops` by a tensor (and by control edges when asked), `ops`
    included."""
    control_inputs, control_outputs = check_cios(control_inputs, control_outputs,
                                                 control_ios)
    ops = util.make_list_of_op(ops)
    res: list = []
    for op in ops:
        util.concatenate_unique(res, [t.op for t in op.inputs])
        for t in op.outputs:
            util.concatenate_unique(res, t.consumers())
        if control_outputs is not None:
            util.concatenate_unique(res, control_outputs.get(op))
        if control_inputs:
            util.concatenate_unique(res, op.control_inputs)
    return res


def compute_boundary_ts(ops):
    """(inputs, outputs, insides) of the subgraph made of `ops`: tensors coming from
    outside, tensors produced inside and used outside or by nobody, tensors both
    produced and consumed inside."""
    ops = util.make_list_of_op(ops)
    ops_set = frozenset(ops)
    input_ts: list = []
    for op in ops:
        util.concatenate_unique(input_ts, op.inputs)
    output_ts: list = []
    for op in ops:
        util.concatenate_unique(output_ts, op.outputs)
    output_set = frozenset(output_ts)
    inside_ts = [t for t in input_ts if t in output_set]
    only_inside = frozenset(t for t in inside_ts if set(t.consumers()) <= ops_set)
    inside_set = frozenset(inside_ts)
    outside_outputs = [t for t in output_ts if t not in only_inside]
    outside_inputs = [t for t in input_ts if t not in inside_set]
    return outside_inputs, outside_outputs, inside_ts


def get_within_boundary_ops(ops, seed_ops, boundary_ops=(), inclusive=True,
                            control_inputs=False, control_outputs=None,
                            control_ios=None) -> list:
    """The ops of `ops` reachable from `seed_ops` (in both directions) without crossing
    `boundary_ops`."""
    control_inputs, control_outputs = check_cios(control_inputs, control_outputs,
                                                 control_ios)
    ops = util.make_list_of_op(ops)
    seed_ops = util.make_list_of_op(seed_ops, allow_graph=False)
    boundary_ops = set(util.make_list_of_op(boundary_ops))
    res = set(seed_ops)
    if boundary_ops & res:
        raise ValueError("Boundary is intersecting with the seeds.")
    wave = set(seed_ops)
    while wave:
        new_wave = set()
        for op in get_ops_ios(list(wave), control_inputs, control_outputs):
            if op in res or op not in ops or op in boundary_ops:
                continue
            new_wave.add(op)
        res.update(new_wave)
        wave = new_wave
    if not inclusive:
        res -= set(seed_ops)
    return [op for op in ops if op in res]


def _seeds(seed_ops, tensors_to_ops):
    if not util.is_iterable(seed_ops):
        seed_ops = [seed_ops]
    seed_ops = list(seed_ops)
    if not seed_ops:
        return None
    if isinstance(seed_ops[0], Tensor):
        return tensors_to_ops(util.make_list_of_t(seed_ops, allow_graph=False))
    return util.make_list_of_op(seed_ops, allow_graph=False)


def _walk(seeds, within_ops, within_ops_fn, step, inclusive) -> list:
    """Waves from `seeds` through `step(op)` (the next ops), kept within the bounds."""
    seeds = list(dict.fromkeys(seeds))
    if within_ops is not None:
        within_ops = frozenset(util.make_list_of_op(within_ops, allow_graph=False))
        seeds = [op for op in seeds if op in within_ops]

    def inside(op) -> bool:
        return (within_ops is None or op in within_ops) and (
            within_ops_fn is None or within_ops_fn(op))

    result = list(seeds)
    reached = set(seeds)
    wave = seeds
    while wave:
        new_wave = set()
        for op in wave:
            for nxt in step(op):
                if nxt not in reached and inside(nxt):
                    new_wave.add(nxt)
        wave = _by_id(new_wave)
        result.extend(wave)
        reached.update(wave)
    if not inclusive:
        seed_set = set(seeds)
        result = [op for op in result if op not in seed_set]
    return result


def get_forward_walk_ops(seed_ops, inclusive=True, within_ops=None, within_ops_fn=None,
                         stop_at_ts=(), control_outputs=None) -> list:
    """The ops reached from `seed_ops` following outputs to consumers (and control
    outputs if given a `util.ControlOutputs`); a tensor seed starts at its consumers.
    Tensors in `stop_at_ts` are not followed."""
    _, control_outputs = check_cios(False, control_outputs)
    seeds = _seeds(seed_ops, util.get_consuming_ops)
    if seeds is None:
        return []
    stop = frozenset(util.make_list_of_t(stop_at_ts))

    def step(op):
        for t in op.outputs:
            if t not in stop:
                yield from t.consumers()
        if control_outputs is not None:
            yield from control_outputs.get(op)

    return _walk(seeds, within_ops, within_ops_fn, step, inclusive)


def get_backward_walk_ops(seed_ops, inclusive=True, within_ops=None, within_ops_fn=None,
                          stop_at_ts=(), control_inputs=False) -> list:
    """The ops reached from `seed_ops` following inputs to their producers (and control
    inputs if asked); a tensor seed starts at its producer. Tensors in `stop_at_ts` are
    not followed."""
    control_inputs, _ = check_cios(control_inputs, None)
    seeds = _seeds(seed_ops, util.get_generating_ops)
    if seeds is None:
        return []
    stop = frozenset(util.make_list_of_t(stop_at_ts))

    def step(op):
        for t in op.inputs:
            if t not in stop:
                yield t.op
        if control_inputs:
            yield from op.control_inputs

    return _walk(seeds, within_ops, within_ops_fn, step, inclusive)


def _both_walks(forward_seed_ops, backward_seed_ops, forward_inclusive,
                backward_inclusive, within_ops, within_ops_fn, control_inputs,
                control_outputs, control_ios):
    control_inputs, control_outputs = check_cios(control_inputs, control_outputs,
                                                 control_ios)
    forward = get_forward_walk_ops(forward_seed_ops, inclusive=forward_inclusive,
                                   within_ops=within_ops, within_ops_fn=within_ops_fn,
                                   control_outputs=control_outputs)
    backward = get_backward_walk_ops(backward_seed_ops, inclusive=backward_inclusive,
                                     within_ops=within_ops, within_ops_fn=within_ops_fn,
                                     control_inputs=control_inputs)
    return forward, backward


def get_walks_intersection_ops(forward_seed_ops, backward_seed_ops, forward_inclusive=True,
                               backward_inclusive=True, within_ops=None,
                               within_ops_fn=None, control_inputs=False,
                               control_outputs=None, control_ios=None) -> list:
    """The ops both after `forward_seed_ops` and before `backward_seed_ops`: the ops on
    a path between them (in the order of the forward walk)."""
    forward, backward = _both_walks(forward_seed_ops, backward_seed_ops, forward_inclusive,
                                    backward_inclusive, within_ops, within_ops_fn,
                                    control_inputs, control_outputs, control_ios)
    backward = set(backward)
    return [op for op in forward if op in backward]


def get_walks_union_ops(forward_seed_ops, backward_seed_ops, forward_inclusive=True,
                        backward_inclusive=True, within_ops=None, within_ops_fn=None,
                        control_inputs=False, control_outputs=None,
                        control_ios=None) -> list:
    """The ops after `forward_seed_ops` or before `backward_seed_ops`."""
    forward, backward = _both_walks(forward_seed_ops, backward_seed_ops, forward_inclusive,
                                    backward_inclusive, within_ops, within_ops_fn,
                                    control_inputs, control_outputs, control_ios)
    return util.concatenate_unique(forward, backward)


def select_ops(*args, **kwargs) -> list:
    """Ops selected by regexes (matched against op names with ``re.search``), ops,
    lists of ops and graphs; ``graph=`` (needed when only regexes are given: the
    default graph otherwise), ``restrict_ops_regex=``, ``positive_filter=``.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default() as g:
    ...     _ = tf.constant(1.0, name="foo/a"), tf.constant(2.0, name="bar/a")
    >>> [op.name for op in select_ops("^bar", graph=g)]
    ['bar/a']
    """
    return _select(args, kwargs, "select_ops", want_ops=True)[0]


def select_ts(*args, **kwargs) -> list:
    """Tensors selected as in `select_ops` (regexes matched against tensor names)."""
    return _select(args, kwargs, "select_ts", want_ts=True)[1]


def select_ops_and_ts(*args, **kwargs):
    """(ops, tensors) selected as in `select_ops`; a regex beginning with ``(?#ops)``
    selects ops, one beginning with ``(?#ts)`` tensors, any other both."""
    return _select(args, kwargs, "select_ops_and_ts", want_ops=True, want_ts=True,
                   tagged=True)


def _select(args, kwargs, fn_name, want_ops=False, want_ts=False, tagged=False):
    unknown = set(kwargs) - {"graph", "restrict_ops_regex", "restrict_ts_regex",
                             "positive_filter"}
    if unknown:
        raise TypeError(f"{fn_name}: unexpected keyword argument(s) {sorted(unknown)}")
    graph = kwargs.get("graph")
    if graph is not None and not isinstance(graph, Graph):
        raise TypeError(f"{fn_name}: graph= must be a tf.Graph, got {type(graph).__name__}")
    for arg in args:
        if isinstance(arg, Graph):
            graph = graph or arg
        elif not isinstance(arg, str | bytes) and not hasattr(arg, "pattern"):
            items = arg if util.is_iterable(arg) else [arg]
            for item in items:
                if isinstance(item, Operation | Tensor):
                    graph = graph or item.graph
    if graph is None:
        graph = get_default_graph()
    ops: list = []
    ts: list = []
    for arg in args:
        if isinstance(arg, Graph):
            if want_ops:
                util.concatenate_unique(ops, arg.get_operations())
            if want_ts:
                util.concatenate_unique(ts, util.get_tensors(arg))
        elif isinstance(arg, str | bytes) or hasattr(arg, "pattern"):
            pattern = util.make_regex(arg.decode() if isinstance(arg, bytes) else arg)
            text = pattern.pattern
            take_ops = want_ops and not (tagged and text.startswith("(?#ts)"))
            take_ts = want_ts and not (tagged and text.startswith("(?#ops)"))
            if take_ops:
                util.concatenate_unique(ops, filter_ops_from_regex(graph, pattern))
            if take_ts:
                util.concatenate_unique(ts, filter_ts_from_regex(graph, pattern))
        else:
            items = list(arg) if util.is_iterable(arg) else [arg]
            for item in items:
                if isinstance(item, Operation):
                    if item.graph is not graph:
                        raise ValueError(f"{fn_name}: op '{item.name}' is not in the "
                                         "selection's graph")
                    if want_ops:
                        util.concatenate_unique(ops, [item])
                elif isinstance(item, Tensor):
                    if item.graph is not graph:
                        raise ValueError(f"{fn_name}: tensor '{item.name}' is not in the "
                                         "selection's graph")
                    if want_ts:
                        util.concatenate_unique(ts, [item])
                else:
                    raise TypeError(f"{fn_name}: expected a regex, an op, a tensor or a "
                                    f"graph, got {type(item).__name__}: {item!r}")
    restrict = kwargs.get("restrict_ops_regex")
    if restrict is not None:
        ops = filter_ops_from_regex(ops, restrict)
    restrict_ts = kwargs.get("restrict_ts_regex")
    if restrict_ts is not None:
        pattern = util.make_regex(restrict_ts)
        ts = [t for t in ts if pattern.search(t.name)]
    positive = kwargs.get("positive_filter")
    if positive is not None:
        ops = [op for op in ops if positive(op)]
        ts = [t for t in ts if positive(t)]
    return ops, ts
