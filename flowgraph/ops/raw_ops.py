"""`tf.raw_ops`: every registered op type under TensorFlow's name, called with
TensorFlow's keyword arguments (inputs and attributes by name, from
`flowgraph.ops.raw_op_signatures`).

A call builds one op: its single output is returned as a Tensor, several as a tuple, none
as the Operation. List inputs (``AddN``'s ``inputs``, ``ConcatV2``'s ``values``) take a
Python list and set their length attribute. Python values convert to the dtype of the
first tensor argument where they can.

Example
-------
>>> import flowgraph as tf
>>> y = tf.raw_ops.MatMul(a=[[1.0, 2.0]], b=[[3.0], [4.0]], transpose_a=False)
>>> tf.Session().run(y).tolist()
[[11.0]]
"""

from __future__ import annotations

import collections
import functools

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import registered_ops
from flowgraph.framework.tf_formats.tf_op_defs import OP_DEFS, OUTPUT_NAMES
from flowgraph.ops.op_util import make_op, op_scope
from flowgraph.ops.raw_op_signatures import SIGNATURES

__all__: list[str] = []


def __getattr__(op_type: str):
    if op_type.startswith("__") or op_type not in SIGNATURES \
            or op_type not in registered_ops():
        raise AttributeError(f"tf.raw_ops has no op '{op_type}': flowgraph does not implement "
                             "that op type (`flowgraph ops` lists the ones it has)")
    return _raw_op(op_type)


def __dir__():
    return sorted(n for n in SIGNATURES if n in registered_ops())


@functools.cache
def _raw_op(op_type: str):
    ins, attrs = SIGNATURES[op_type]
    inputs = []  # (python name, takes a list, type attribute)
    for item in (i for i in ins.split(",") if i):
        arg, _, type_attr = item.partition(":")
        inputs.append((arg.lstrip("*"), arg.startswith("*"), type_attr))
    attr_map = dict(a.split("=") if "=" in a else (a, a) for a in attrs.split(",") if a)
    accepted = [n for n, _, _ in inputs] + list(attr_map)

    def raw_op(*args, **kwargs):
        if args:
            raise TypeError(f"tf.raw_ops.{op_type} only takes keyword args (possible keys: "
                            f"{[*accepted, 'name']}). Please pass these args as kwargs "
                            "instead.")
        name = kwargs.pop("name", None)
        missing = [n for n, _, _ in inputs if n not in kwargs]
        if missing:
            raise TypeError(f"tf.raw_ops.{op_type}: missing required argument(s) "
                            f"{', '.join(repr(m) for m in missing)}; it takes the keyword "
                            f"arguments {accepted}")
        values = {n: kwargs.pop(n) for n, _, _ in inputs}
        unknown = sorted(set(kwargs) - set(attr_map))
        if unknown:
            raise TypeError(f"tf.raw_ops.{op_type} got unexpected keyword argument(s) "
                            f"{unknown}; it takes {accepted}")
        hints = _type_hints(inputs, values)
        op_def = registered_ops()[op_type]
        flat, lengths = [], []
        given = [v for n, is_list, _ in inputs
                 for v in (list(values[n]) if is_list else [values[n]])]
        # As TF: Python values become constants named after their argument inside the
        # op's scope ("Reshape/shape", "AddN/inputs_1"), and the op takes the scope's name.
        fixed = _fixed_dtypes(op_type, len(inputs))
        with op_scope(name, op_type, given) as scope:
            for k, (n, is_list, type_attr) in enumerate(inputs):
                items = list(values[n]) if is_list else [values[n]]
                flat += [_ref_or_tensor(v, op_def, len(flat) + i,
                                        hints.get(type_attr) or fixed[k],
                                        f"{n}_{i}" if is_list else n)
                         for i, v in enumerate(items)]
                if is_list:
                    lengths.append(len(items))
            op_attrs = {attr_map[k]: _shape_list(attr_map[k], v) for k, v in kwargs.items()
                        if attr_map[k] in op_def.attrs}
            if lengths and "N" in op_def.attrs:
                op_attrs["N"] = lengths[0]
            _inferred_list_attrs(op_type, op_def, inputs, values, flat, op_attrs)
            if op_def.attrs.get("T", 0) is None and "T" not in op_attrs:
                # an op whose T the registry leaves open (the Resource*Apply updates):
                # the dtype of its first input typed T, as TF infers it
                at = 0
                for n, is_list, type_attr in inputs:
                    if type_attr == "T":
                        op_attrs["T"] = flat[at].dtype.base_dtype
                        break
                    at += len(values[n]) if is_list else 1
            op = make_op(op_type, flat, op_attrs, name=scope)
        return _grouped_outputs(op)

    raw_op.__name__ = op_type
    raw_op.__qualname__ = f"raw_ops.{op_type}"
    raw_op.__doc__ = f"The {op_type} op; keyword arguments {accepted} (and name)."
    return raw_op


def _shape_list(attr: str, value):
    """A list-of-shapes attribute (``dense_shapes=[[2], [None]]``) as TensorShapes, as
    TensorFlow's wrappers convert it (so that it is written as shapes)."""
    if attr.endswith("shapes") and isinstance(value, list | tuple) and \
            all(isinstance(v, list | tuple) for v in value):
        from flowgraph.framework.tensor_shape import TensorShape

        return [TensorShape(list(v)) for v in value]
    return value


def _fixed_dtypes(op_type: str, count: int) -> list:
    """Per input argument, the dtype TensorFlow's OpDef fixes for it (``ParseExampleV2``'s
    string ``names``: an empty list converts to a string vector), else None."""
    specs = OP_DEFS.get(op_type, (None,))[0]
    if specs is None or len(specs) != count:
        return [None] * count
    return [_dtypes.as_dtype(spec[3]) if spec[3] and spec[3] < 100 else None
            for spec in specs]


def _inferred_list_attrs(op_type: str, op_def, inputs, values, flat, op_attrs) -> None:
    """Set the count and type-list attributes TensorFlow infers from list inputs
    (``ParseSingleSequenceExample``'s ``Ncontext_sparse``, ``ParseExampleV2``'s
    ``Tdense``) where the registry declares them with an empty default and the call
    did not give them."""
    specs = OP_DEFS.get(op_type, (None,))[0]
    if specs is None or len(specs) != len(inputs):
        return
    at = 0
    for (n, is_list, _), (_, number_attr, type_list_attr, _) in zip(inputs, specs):
        count = len(values[n]) if is_list else 1
        if number_attr and op_def.attrs.get(number_attr) == 0 \
                and number_attr not in op_attrs:
            op_attrs[number_attr] = count
        if type_list_attr and op_def.attrs.get(type_list_attr) == [] \
                and type_list_attr not in op_attrs:
            op_attrs[type_list_attr] = [t.dtype.base_dtype for t in flat[at:at + count]]
        at += count


@functools.cache
def _result_type(op_type: str):
    """TF's result type of a multi-output op: a named tuple of its output arguments."""
    return collections.namedtuple(op_type, OUTPUT_NAMES[op_type])


def _grouped_outputs(op):
    """The op's outputs as TensorFlow's generated wrapper returns them: the Operation when
    there are none, a Tensor for one output argument, a list for one list-valued argument
    (``Unpack``, ``Split``), else a named tuple of the output arguments in which a list
    argument is a list (``SparseSplit``: three lists)."""
    outputs = op.outputs
    if not outputs:
        return op
    specs = OP_DEFS.get(op.type, (None, None))[1]
    if not specs or op.type not in OUTPUT_NAMES:  # a flowgraph-only op: flat, as before
        return outputs[0] if len(outputs) == 1 else tuple(outputs)
    fixed = sum(1 for spec in specs if not (spec[1] or spec[2]))
    lists = len(specs) - fixed
    each = (len(outputs) - fixed) // lists if lists else 0
    sizes = _list_sizes(op, specs)
    if sizes is None and lists and (len(outputs) - fixed) % lists:
        return tuple(outputs)  # list arguments of different lengths, not in the attrs
    groups, at = [], 0
    for i, spec in enumerate(specs):
        if spec[1] or spec[2]:
            size = each if sizes is None else sizes[i]
            groups.append(outputs[at:at + size])
            at += size
        else:
            groups.append(outputs[at])
            at += 1
    if len(groups) == 1:
        return groups[0]
    return _result_type(op.type)._make(groups)


def _list_sizes(op, specs) -> list | None:
    """The length of each output argument from the op's count and type-list attributes
    (``ParseExampleV2``: ``num_sparse`` indices, ``len(Tdense)`` dense values), or None
    when an attribute is missing or they do not add up to the op's outputs."""
    sizes = []
    for _, number_attr, type_list_attr, _ in specs:
        if number_attr or type_list_attr:
            value = op.attrs.get(number_attr or type_list_attr)
            if value is None:
                return None
            sizes.append(int(value) if number_attr else len(value))
        else:
            sizes.append(1)
    return sizes if sum(sizes) == len(op.outputs) else None


def _ref_or_tensor(value, op_def, index: int, preferred, name: str):
    """A variable (or ref tensor) stays a ref for an op input that takes one (``ref`` of
    Assign, ``resource`` of the stateful random ops); anything else becomes a tensor
    (a constant named `name` when it is a Python value)."""
    takes_ref = op_def.ref_inputs == "all" or index in op_def.ref_inputs
    if takes_ref and hasattr(value, "_ref"):
        return value._ref()
    if takes_ref and isinstance(value, Tensor) and value.dtype.is_ref_dtype:
        return value
    return convert_to_tensor(value, preferred_dtype=preferred, name=name)


def _type_hints(inputs, values) -> dict:
    """For each type attribute, the dtype of the first tensor given for it: Python values
    of inputs sharing that attribute convert to it (``AddV2(x=t, y=1.0)``)."""
    hints = {}
    for n, is_list, type_attr in inputs:
        if not type_attr or type_attr in hints:
            continue
        for item in (values[n] if is_list else [values[n]]):
            if isinstance(item, Tensor):
                hints[type_attr] = item.dtype.base_dtype
                break
    return hints
