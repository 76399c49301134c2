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
* ``While`` / ``StatelessWhile``: the condition and body in a frame of ``Enter`` /
  ``Merge`` / ``Switch`` / ``NextIteration`` / ``Exit`` nodes, TF 1's ``tf.while_loop``
  form.

The call node itself becomes an ``IdentityN`` of the results under its own name, so that
``call:0`` and ``^call`` keep their meaning (a ``NoOp`` when the function returns
nothing). A body node without inputs gets a control edge from the call's inputs (or the
branch's / loop's pivot), so it runs where the call would. ``Case``, function-valued
attributes of other ops (``tf.data``'s ``MapDataset``) and recursive functions are not
inlined: importing them fails with the op named.

Example
-------
>>> from flowgraph.framework.tf_formats.function_inline import inline_functions
>>> from flowgraph.framework.event_format import GraphDef, NodeDef
>>> inline_functions(GraphDef(node=[NodeDef(name="x", op="NoOp")])).node[0].name
'x'
"""

from __future__ import annotations

from flowgraph.framework.event_format import AttrValue, GraphDef, NameAttrList, NodeDef
from flowgraph.framework.tf_formats.meta_graph_messages import FunctionDefProto
from flowgraph.framework.tf_formats.tf_op_defs import OP_DEFS, OUTPUT_NAMES

__all__ = ["inline_functions"]

_CALLS = frozenset({"PartitionedCall", "StatefulPartitionedCall"})
_IFS = frozenset({"If", "StatelessIf"})
_WHILES = frozenset({"While", "StatelessWhile"})
_MAX_NESTING = 64  # deeper means a recursive function, which cannot be inlined
_DT_BOOL = 10


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
    if body.op in _CALLS or body.op in _IFS or body.op in _WHILES:
        return index  # one list argument ("output")
    if body.op in functions:
        names = [a.name for a in functions[body.op].signature.output_arg]
        if arg not in names:
            raise ValueError(f"{where}: '{body.name}' ({body.op}) has no output '{arg}'")
        return names.index(arg) + index
    if body.op not in OUTPUT_NAMES:
        raise ValueError(f"{where}: '{body.name}' has op {body.op}, which flowgraph does "
                         "not have")
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
    nodes = []
    for k, (ref, dtype) in enumerate(zip(data, types, strict=True)):
        nodes.append(_node(f"{name}/enter_{k}", "Enter", [ref, *controls], device,
                           T=_type_attr(dtype), frame_name=frame,
                           is_constant=AttrValue(b=False),
                           parallel_iterations=AttrValue(i=iterations)))
        nodes.append(_node(f"{name}/merge_{k}", "Merge",
                           [f"{name}/enter_{k}", f"{name}/next_{k}"], device,
                           T=_type_attr(dtype), N=AttrValue(i=2)))
    cond_fn, cond_bindings = _func(node, "cond", functions)
    cond, (pred,), _ = _inline_body(
        cond_fn, cond_bindings, f"{name}/cond/", [f"{name}/merge_{k}" for k in range(len(data))],
        [f"^{name}/merge_0"], device, functions)
    nodes.extend(cond)
    nodes.append(_node(f"{name}/loop_cond", "LoopCond", [pred], device))
    for k, dtype in enumerate(types):
        nodes.append(_node(f"{name}/switch_{k}", "Switch",
                           [f"{name}/merge_{k}", f"{name}/loop_cond"], device,
                           T=_type_attr(dtype)))
        nodes.append(_node(f"{name}/exit_{k}", "Exit", [f"{name}/switch_{k}"], device,
                           T=_type_attr(dtype)))
        nodes.append(_node(f"{name}/iteration_{k}", "Identity", [f"{name}/switch_{k}:1"],
                           device, T=_type_attr(dtype)))
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
