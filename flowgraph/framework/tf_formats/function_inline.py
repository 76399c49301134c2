"""Graph functions of a TensorFlow GraphDef, inlined when the graph is imported.

A GraphDef written by TensorFlow can carry a function library (``GraphDef.library``):
``tf.function`` called in a graph, ``Defun``, and TF 2's functional control flow. Its
nodes call the functions by name. flowgraph's executor runs plain nodes only, so the
import replaces each call with the function's body, as TensorFlow's own graph optimizer
inlines calls before running them:

* ``PartitionedCall`` / ``StatefulPartitionedCall`` and a node whose op names a library
  function: the body's nodes under the call's name (``call/mul``);
* ``If`` / ``StatelessIf``: both branches between ``Switch`` and ``Merge`` nodes, TF 1's
  ``tf.cond`` form;
* ``Case`` / ``StatelessCase`` (``tf.switch_case``): the same with one ``Switch`` per
  branch and input, each on ``Equal(index, k)`` (an index out of range takes the last
  branch, as in TensorFlow), and one ``Merge`` of all branches per output;
* ``While`` / ``StatelessWhile``: the condition and body in a frame of ``Enter`` /
  ``Merge`` / ``Switch`` / ``NextIteration`` / ``Exit`` nodes, TF 1's ``tf.while_loop``
  form;
* ``For`` (``functional_ops.For``): the same loop over a counter from ``start`` by
  ``delta`` while below (above, for a negative ``delta``) ``limit``, after an ``Assert``
  that the range is valid, as TensorFlow's kernel checks.

The call node itself becomes an ``IdentityN`` of the results under its own name, so that
``call:0`` and ``^call`` keep their meaning (a ``NoOp`` when the function returns
nothing). A body node without inputs gets a control edge from the call's inputs (or the
branch's / loop's pivot), so it runs where the call would. Function-valued attributes
of other ops (``tf.data``'s ``MapDataset``) and recursive functions are not inlined:
importing them fails with the op named.

Example
-------
>>> from flowgraph.framework.tf_formats.function_inline import inline_functions
>>> from flowgraph.framework.event_format import GraphDef, NodeDef
>>> inline_functions(GraphDef(node=[NodeDef(name="x", op="NoOp")])).node[0].name
'x'
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.event_format import (
    AttrValue,
    GraphDef,
    NameAttrList,
    NodeDef,
    make_tensor_proto,
)
from flowgraph.framework.tf_formats.meta_graph_messages import FunctionDefProto
from flowgraph.framework.tf_formats.tf_op_defs import OP_DEFS, OUTPUT_NAMES

__all__ = ["inline_functions"]

_CALLS = frozenset({"PartitionedCall", "StatefulPartitionedCall"})
_IFS = frozenset({"If", "StatelessIf"})
_WHILES = frozenset({"While", "StatelessWhile"})
_CASES = frozenset({"Case", "StatelessCase"})
_DT_STRING = 7
_MAX_NESTING = 64  # deeper means a recursive function, which cannot be inlined
_DT_BOOL = 10
_DT_INT32 = 3


def inline_functions(message: GraphDef) -> GraphDef:
    """`message` with every function call inlined (the message itself when its library
    is empty); the result has no library.

    Raises
    ------
    ValueError
        A call names a function the library lacks, a body refers to an output its op
        does not have, or the functions call themselves.
    """
    raws = list(message.library.function) if message.HasField("library") else []
    if not raws:
        return message
    functions = {}
    for raw in raws:
        fn = FunctionDefProto.FromString(raw)
        functions[fn.signature.name] = fn
    nodes = list(message.node)
    for _ in range(_MAX_NESTING):
        out, inlined = [], False
        for node in nodes:
            lower = _lowering(node, functions)
            if lower is None:
                out.append(node)
            else:
                out.extend(lower(node, functions))
                inlined = True
        nodes = out
        if not inlined:
            return GraphDef(node=nodes, versions=message.versions)
    raise ValueError(f"GraphDef function library: calls nest more than {_MAX_NESTING} "
                     "deep (a recursive function?); flowgraph inlines calls and cannot "
                     "import recursion")


def _lowering(node: NodeDef, functions: dict):
    if node.op in _CALLS:
        return _lower_call
    if node.op in _IFS:
        return _lower_if
    if node.op in _WHILES:
        return _lower_while
    if node.op in _CASES:
        return _lower_case
    if node.op == "For":
        return _lower_for
    if node.op in functions:
        return _lower_call
    return None


# -- helpers -----------------------------------------------------------------------------
def _func(node: NodeDef, key: str, functions: dict):
    """(FunctionDef, attribute bindings) of the function attribute `key` of `node`."""
    if key not in node.attr or "func" not in node.attr[key].__dict__:
        raise ValueError(f"node '{node.name}' ({node.op}): no function attribute '{key}'")
    ref = NameAttrList.FromString(node.attr[key].func)
    if ref.name not in functions:
        raise ValueError(f"node '{node.name}' ({node.op}) calls function '{ref.name}', "
                         "which the GraphDef's library does not define")
    return functions[ref.name], dict(ref.attr)


def _split_inputs(node: NodeDef) -> tuple[list, list]:
    data = [r for r in node.input if not r.startswith("^")]
    return data, [r for r in node.input if r.startswith("^")]


def _types(values) -> AttrValue:
    return AttrValue(list=AttrValue.ListValue(type=[int(t) for t in values]))


def _node(name: str, op: str, inputs: list, device: str = "", **attrs) -> NodeDef:
    node = NodeDef(name=name, op=op, input=list(inputs), attr=attrs)
    if device:
        node.device = device
    return node


def _loop_entries(name: str, values: list, types: list, controls: list, frame: AttrValue,
                  iterations: AttrValue, device: str) -> list:
    """A v1 loop frame's entry for each carried value ``k``: ``enter_k`` (with `controls`)
    and ``merge_k``, which also takes ``next_k`` (made by the caller)."""
    nodes = []
    for k, (ref, dtype) in enumerate(zip(values, types, strict=True)):
        nodes.append(_node(f"{name}/enter_{k}", "Enter", [ref, *controls], device,
                           T=_type_attr(dtype), frame_name=frame,
                           is_constant=AttrValue(b=False), parallel_iterations=iterations))
        nodes.append(_node(f"{name}/merge_{k}", "Merge",
                           [f"{name}/enter_{k}", f"{name}/next_{k}"], device,
                           T=_type_attr(dtype), N=AttrValue(i=2)))
    return nodes


def _loop_switches(name: str, types: list, device: str) -> list:
    """Each carried value's ``switch_k`` on ``loop_cond``, its ``exit_k`` and the
    ``iteration_k`` the body reads."""
    nodes = []
    for k, dtype in enumerate(types):
        nodes.append(_node(f"{name}/switch_{k}", "Switch",
                           [f"{name}/merge_{k}", f"{name}/loop_cond"], device,
                           T=_type_attr(dtype)))
        nodes.append(_node(f"{name}/exit_{k}", "Exit", [f"{name}/switch_{k}"], device,
                           T=_type_attr(dtype)))
        nodes.append(_node(f"{name}/iteration_{k}", "Identity", [f"{name}/switch_{k}:1"],
                           device, T=_type_attr(dtype)))
    return nodes


def _type_attr(dtype: int) -> AttrValue:
    return AttrValue(type=int(dtype))


def _list_types(node: NodeDef, key: str) -> list:
    return list(node.attr[key].list.type) if key in node.attr else []


def _output_count(body: NodeDef, spec) -> int:
    _, number_attr, list_attr, _ = spec
    if number_attr:
        if number_attr in body.attr:
            return int(body.attr[number_attr].i)
        default = dict(OP_DEFS[body.op][2]).get(number_attr)
        return int(AttrValue.FromString(bytes.fromhex(default)).i) if default else 1
    if list_attr:
        return len(_list_types(body, list_attr))
    return 1


def _flat_index(body: NodeDef, arg: str, index: int, functions: dict, where: str) -> int:
    """The position among `body`'s outputs of its output argument `arg`'s item `index`."""
    if body.op in _CALLS or body.op in _IFS or body.op in _WHILES or body.op in _CASES \
            or body.op == "For":
        return index  # one list argument ("output")
    if body.op in functions:
        names = [a.name for a in functions[body.op].signature.output_arg]
        if arg not in names:
            raise ValueError(f"{where}: '{body.name}' ({body.op}) has no output '{arg}'")
        return names.index(arg) + index
    if body.op not in OUTPUT_NAMES:
        # An op flowgraph does not have: its node fails to import (or, in a SavedModel,
        # is dropped with its consumers: TF 2's ``__traced_save`` functions), so the
        # position only has to name a tensor of it.
        return index
    names, specs = OUTPUT_NAMES[body.op], OP_DEFS[body.op][1]
    if arg not in names:
        raise ValueError(f"{where}: op {body.op} has no output '{arg}' (its outputs: "
                         f"{', '.join(names)})")
    position = 0
    for name, spec in zip(names, specs, strict=True):
        if name == arg:
            return position + index
        position += _output_count(body, spec)
    raise AssertionError("unreachable")


def _inline_body(fn: FunctionDefProto, bindings: dict, prefix: str, args: list,
                 anchors: list, device: str, functions: dict) -> tuple[list, list, list]:
    """The body of `fn` as graph nodes named ``prefix + node``, reading `args` (graph
    tensor names, one per input argument); a node without inputs gets `anchors` as
    control inputs. Returns (nodes, output tensor names, control-output node names)."""
    where = f"function '{fn.signature.name}'"
    inputs = {a.name: ref for a, ref in zip(fn.signature.input_arg, args, strict=True)}
    by_name = {n.name: n for n in fn.node_def}

    def tensor(ref: str) -> str:
        if ref.startswith("^"):
            name = ref[1:]
            if name in inputs:
                return "^" + inputs[name].lstrip("^").partition(":")[0]
            return f"^{prefix}{name}"
        if ref in inputs:
            return inputs[ref]
        node_name, _, rest = ref.partition(":")
        if node_name not in by_name:
            raise ValueError(f"{where}: an input names '{ref}', which is neither an argument "
                             "nor a node of the body")
        arg, _, index = rest.partition(":")
        flat = _flat_index(by_name[node_name], arg, int(index or 0), functions, where)
        return f"{prefix}{node_name}" + (f":{flat}" if flat else "")

    nodes = []
    for body in fn.node_def:
        node = NodeDef.FromString(body.SerializeToString())
        node.name = prefix + body.name
        refs = [tensor(r) for r in body.input] or list(anchors)
        node.ClearField("input")
        node.input.extend(refs)
        if not node.device and device:
            node.device = device
        for key, value in list(node.attr.items()):
            if "placeholder" in value.__dict__:
                if value.placeholder not in bindings:
                    raise ValueError(f"{where}: attribute '{key}' of '{body.name}' is the "
                                     f"placeholder '{value.placeholder}', which the call "
                                     "does not bind")
                node.attr[key] = bindings[value.placeholder]
        nodes.append(node)
    outputs = [tensor(fn.ret[a.name]) for a in fn.signature.output_arg]
    controls = [prefix + name for name in fn.control_ret.values()]
    return nodes, outputs, controls


def _result(node: NodeDef, outputs: list, types: list, controls: list) -> NodeDef:
    """The node standing for the call under its name: IdentityN of the outputs."""
    deps = [f"^{c}" for c in controls]
    if not outputs:
        return _node(node.name, "NoOp", deps, node.device)
    return _node(node.name, "IdentityN", [*outputs, *deps], node.device, T=_types(types))


def _anchors(data: list, controls: list) -> list:
    """Control inputs for the body's input-less nodes: the call's control inputs and
    the node of its first input (which puts them in the call's loop frame, if any)."""
    first = ["^" + data[0].partition(":")[0]] if data else []
    return list(dict.fromkeys([*controls, *first]))


# -- the three lowerings -----------------------------------------------------------------
def _lower_call(node: NodeDef, functions: dict) -> list:
    if node.op in _CALLS:
        fn, bindings = _func(node, "f", functions)
        types = _list_types(node, "Tout")
    else:
        fn, bindings = functions[node.op], dict(node.attr)
        types = [a.type or bindings[a.type_attr].type for a in fn.signature.output_arg]
    data, controls = _split_inputs(node)
    if len(data) != len(fn.signature.input_arg):
        raise ValueError(f"node '{node.name}' calls '{fn.signature.name}' with {len(data)} "
                         f"inputs; the function takes {len(fn.signature.input_arg)}")
    body, outputs, ctrl = _inline_body(fn, bindings, f"{node.name}/", data,
                                       _anchors(data, controls), node.device, functions)
    for b in body:  # the call's control inputs come before any of its body
        b.input.extend(c for c in controls if c not in b.input)
    return [*body, _result(node, outputs, types, ctrl)]


def _lower_if(node: NodeDef, functions: dict) -> list:
    name, device = node.name, node.device
    data, controls = _split_inputs(node)
    if not data:
        raise ValueError(f"node '{name}' ({node.op}) has no condition input")
    cond_type = node.attr["Tcond"].type if "Tcond" in node.attr else _DT_BOOL
    if cond_type != _DT_BOOL:
        raise ValueError(f"node '{name}' ({node.op}): flowgraph inlines conditions of "
                         f"type bool only, this one has DataType {cond_type}")
    pred, inputs = data[0], data[1:]
    in_types, out_types = _list_types(node, "Tin"), _list_types(node, "Tout")
    nodes = [_node(f"{name}/switch_pred", "Switch", [pred, pred, *controls], device,
                   T=_type_attr(_DT_BOOL)),
             _node(f"{name}/pivot_t", "Identity", [f"{name}/switch_pred:1"], device,
                   T=_type_attr(_DT_BOOL)),
             _node(f"{name}/pivot_f", "Identity", [f"{name}/switch_pred"], device,
                   T=_type_attr(_DT_BOOL))]
    for k, (ref, dtype) in enumerate(zip(inputs, in_types, strict=True)):
        nodes.append(_node(f"{name}/input_{k}", "Switch", [ref, pred, *controls], device,
                           T=_type_attr(dtype)))
    branches = {}
    for side, key, port, pivot in (("then", "then_branch", ":1", f"{name}/pivot_t"),
                                   ("else", "else_branch", "", f"{name}/pivot_f")):
        fn, bindings = _func(node, key, functions)
        args = [f"{name}/input_{k}{port}" for k in range(len(inputs))]
        body, outputs, ctrl = _inline_body(fn, bindings, f"{name}/{side}/", args,
                                           [f"^{pivot}"], device, functions)
        nodes.extend(body)
        branches[side] = (outputs, ctrl, pivot)
    for j, dtype in enumerate(out_types):
        nodes.append(_node(f"{name}/output_{j}", "Merge",
                           [branches["else"][0][j], branches["then"][0][j]], device,
                           T=_type_attr(dtype), N=AttrValue(i=2)))
    done = []
    if branches["then"][1] or branches["else"][1]:
        # the taken branch's side effects: a Merge of one live pivot after them
        for side in ("else", "then"):
            _, ctrl, pivot = branches[side]
            nodes.append(_node(f"{name}/{side}_done", "Identity",
                               [pivot, *(f"^{c}" for c in ctrl)], device,
                               T=_type_attr(_DT_BOOL)))
        nodes.append(_node(f"{name}/branch_executed", "Merge",
                           [f"{name}/else_done", f"{name}/then_done"], device,
                           T=_type_attr(_DT_BOOL), N=AttrValue(i=2)))
        done = [f"{name}/branch_executed"]
    outputs = [f"{name}/output_{j}" for j in range(len(out_types))]
    return [*nodes, _result(node, outputs, out_types, done)]


def _branch_functions(node: NodeDef, functions: dict) -> list:
    """[(FunctionDef, attribute bindings)] of a Case's ``branches``."""
    refs = [NameAttrList.FromString(raw) for raw in node.attr["branches"].list.func] \
        if "branches" in node.attr else []
    if not refs:
        raise ValueError(f"node '{node.name}' ({node.op}) has no branches")
    for ref in refs:
        if ref.name not in functions:
            raise ValueError(f"node '{node.name}' ({node.op}) calls function '{ref.name}', "
                             "which the GraphDef's library does not define")
    return [(functions[ref.name], dict(ref.attr)) for ref in refs]


def _int_const(name: str, value: int, anchors: list, device: str) -> NodeDef:
    return _node(name, "Const", anchors, device, dtype=_type_attr(_DT_INT32),
                 value=AttrValue(tensor=make_tensor_proto(np.int32(value))))


def _lower_case(node: NodeDef, functions: dict) -> list:
    """A Case as one If-like diamond per branch, all on the (clamped) branch index."""
    name, device = node.name, node.device
    data, controls = _split_inputs(node)
    if not data:
        raise ValueError(f"node '{name}' ({node.op}) has no branch_index input")
    index, inputs = data[0], data[1:]
    branches = _branch_functions(node, functions)
    in_types, out_types = _list_types(node, "Tin"), _list_types(node, "Tout")
    anchors = _anchors(data, controls)
    last = len(branches) - 1
    int32, boolean = _type_attr(_DT_INT32), _type_attr(_DT_BOOL)
    nodes = [_int_const(f"{name}/zero", 0, anchors, device),
             _int_const(f"{name}/last", last, anchors, device),
             _node(f"{name}/in_range_low", "GreaterEqual", [index, f"{name}/zero"], device,
                   T=int32),
             _node(f"{name}/in_range_high", "LessEqual", [index, f"{name}/last"], device,
                   T=int32),
             _node(f"{name}/in_range", "LogicalAnd",
                   [f"{name}/in_range_low", f"{name}/in_range_high"], device),
             _node(f"{name}/branch_index", "Select",
                   [f"{name}/in_range", index, f"{name}/last"], device, T=int32)]
    outputs_by_branch, done = [], []
    for k, (fn, bindings) in enumerate(branches):
        pred, pivot = f"{name}/pred_{k}", f"{name}/pivot_{k}"
        nodes += [_int_const(f"{name}/k_{k}", k, anchors, device),
                  _node(pred, "Equal", [f"{name}/branch_index", f"{name}/k_{k}"], device,
                        T=int32),
                  _node(f"{name}/switch_pred_{k}", "Switch", [pred, pred, *controls], device,
                        T=boolean),
                  _node(pivot, "Identity", [f"{name}/switch_pred_{k}:1"], device, T=boolean)]
        args = []
        for j, (ref, dtype) in enumerate(zip(inputs, in_types, strict=True)):
            nodes.append(_node(f"{name}/input_{k}_{j}", "Switch", [ref, pred, *controls],
                               device, T=_type_attr(dtype)))
            args.append(f"{name}/input_{k}_{j}:1")
        body, outputs, ctrl = _inline_body(fn, bindings, f"{name}/branch{k}/", args,
                                           [f"^{pivot}"], device, functions)
        nodes.extend(body)
        outputs_by_branch.append(outputs)
        done.append((pivot, ctrl))
    for j, dtype in enumerate(out_types):
        nodes.append(_node(f"{name}/output_{j}", "Merge",
                           [outs[j] for outs in outputs_by_branch], device,
                           T=_type_attr(dtype), N=AttrValue(i=len(branches))))
    finished = []
    if any(ctrl for _, ctrl in done):  # the taken branch's side effects
        for k, (pivot, ctrl) in enumerate(done):
            nodes.append(_node(f"{name}/done_{k}", "Identity",
                               [pivot, *(f"^{c}" for c in ctrl)], device, T=boolean))
        nodes.append(_node(f"{name}/branch_executed", "Merge",
                           [f"{name}/done_{k}" for k in range(len(done))], device,
                           T=boolean, N=AttrValue(i=len(done))))
        finished = [f"{name}/branch_executed"]
    outputs = [f"{name}/output_{j}" for j in range(len(out_types))]
    return [*nodes, _result(node, outputs, out_types, finished)]


def _lower_while(node: NodeDef, functions: dict) -> list:
    name, device = node.name, node.device
    data, controls = _split_inputs(node)
    types = _list_types(node, "T")
    if not data or len(types) != len(data):
        raise ValueError(f"node '{name}' ({node.op}): {len(data)} loop variables but "
                         f"{len(types)} types")
    iterations = node.attr["parallel_iterations"].i if "parallel_iterations" in node.attr \
        else 10
    frame = AttrValue(s=name.encode())
    nodes = _loop_entries(name, data, types, controls, frame, AttrValue(i=iterations), device)
    cond_fn, cond_bindings = _func(node, "cond", functions)
    cond, (pred,), _ = _inline_body(
        cond_fn, cond_bindings, f"{name}/cond/", [f"{name}/merge_{k}" for k in range(len(data))],
        [f"^{name}/merge_0"], device, functions)
    nodes.extend(cond)
    nodes.append(_node(f"{name}/loop_cond", "LoopCond", [pred], device))
    nodes += _loop_switches(name, types, device)
    body_fn, body_bindings = _func(node, "body", functions)
    body, outputs, ctrl = _inline_body(
        body_fn, body_bindings, f"{name}/body/",
        [f"{name}/iteration_{k}" for k in range(len(data))], [f"^{name}/iteration_0"],
        device, functions)
    nodes.extend(body)
    for k, dtype in enumerate(types):
        nodes.append(_node(f"{name}/next_{k}", "NextIteration",
                           [outputs[k], *(f"^{c}" for c in ctrl)], device,
                           T=_type_attr(dtype)))
    exits = [f"{name}/exit_{k}" for k in range(len(data))]
    return [*nodes, _result(node, exits, types, [])]


def _lower_for(node: NodeDef, functions: dict) -> list:
    """``For(start, limit, delta, *inputs)``: a loop frame whose counter runs from
    `start` by `delta`, calling ``body(i, *values)`` each time."""
    name, device = node.name, node.device
    data, controls = _split_inputs(node)
    types = _list_types(node, "T")
    if len(data) != 3 + len(types):
        raise ValueError(f"node '{name}' (For): {len(data) - 3} loop values but "
                         f"{len(types)} types")
    start, limit, delta = data[:3]
    int32, boolean = _type_attr(_DT_INT32), _type_attr(_DT_BOOL)
    anchors = _anchors(data, controls)

    def binary(suffix, op, a, b, dtype=int32):
        attrs = {} if dtype is None else {"T": dtype}  # LogicalAnd / LogicalOr have none
        return _node(f"{name}/{suffix}", op, [a, b], device, **attrs)

    message = _node(f"{name}/message", "Const", anchors, device,
                    dtype=_type_attr(_DT_STRING),
                    value=AttrValue(tensor=make_tensor_proto(np.array(
                        b"For: invalid start/limit/delta (delta must be non-zero and "
                        b"point from start towards limit):", dtype=object))))
    nodes = [_int_const(f"{name}/zero", 0, anchors, device), message,
             binary("up", "Greater", delta, f"{name}/zero"),
             binary("down", "Less", delta, f"{name}/zero"),
             binary("start_le_limit", "LessEqual", start, limit),
             binary("start_ge_limit", "GreaterEqual", start, limit),
             binary("valid_up", "LogicalAnd", f"{name}/up", f"{name}/start_le_limit",
                    None),
             binary("valid_down", "LogicalAnd", f"{name}/down", f"{name}/start_ge_limit",
                    None),
             binary("valid", "LogicalOr", f"{name}/valid_up", f"{name}/valid_down", None),
             _node(f"{name}/check", "Assert",
                   [f"{name}/valid", f"{name}/message", start, limit, delta], device,
                   T=_types([_DT_STRING, _DT_INT32, _DT_INT32, _DT_INT32]),
                   summarize=AttrValue(i=3))]
    frame = AttrValue(s=name.encode())
    iterations = AttrValue(i=node.attr["parallel_iterations"].i
                           if "parallel_iterations" in node.attr else 10)
    check = f"^{name}/check"
    for key, ref in (("limit", limit), ("delta", delta)):
        nodes.append(_node(f"{name}/{key}_enter", "Enter", [ref, check], device, T=int32,
                           frame_name=frame, is_constant=AttrValue(b=True),
                           parallel_iterations=iterations))
    values = [start, *data[3:]]
    all_types = [_DT_INT32, *types]
    nodes += _loop_entries(name, values, all_types, [check, *controls], frame, iterations,
                           device)
    counter = f"{name}/merge_0"
    nodes += [_int_const(f"{name}/loop_zero", 0, [f"^{counter}"], device),
              binary("going_up", "Greater", f"{name}/delta_enter", f"{name}/loop_zero"),
              binary("below", "Less", counter, f"{name}/limit_enter"),
              binary("above", "Greater", counter, f"{name}/limit_enter"),
              _node(f"{name}/pred", "Select",
                    [f"{name}/going_up", f"{name}/below", f"{name}/above"], device,
                    T=boolean),
              _node(f"{name}/loop_cond", "LoopCond", [f"{name}/pred"], device)]
    nodes += _loop_switches(name, all_types, device)
    body_fn, bindings = _func(node, "body", functions)
    body, outputs, ctrl = _inline_body(
        body_fn, bindings, f"{name}/body/",
        [f"{name}/iteration_{k}" for k in range(len(all_types))],
        [f"^{name}/iteration_0"], device, functions)
    nodes.extend(body)
    after = [f"^{c}" for c in ctrl]
    nodes.append(_node(f"{name}/next_0", "NextIteration", [f"{name}/step", *after], device,
                       T=int32))
    nodes.append(binary("step", "AddV2", f"{name}/iteration_0", f"{name}/delta_enter"))
    for k, dtype in enumerate(types, 1):
        nodes.append(_node(f"{name}/next_{k}", "NextIteration", [outputs[k - 1], *after],
                           device, T=_type_attr(dtype)))
    exits = [f"{name}/exit_{k}" for k in range(1, len(all_types))]
    return [*nodes, _result(node, exits, types, [])]
