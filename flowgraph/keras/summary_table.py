"""`Model.summary()`: the table of layers TF 2.15's tf.keras prints.

One row per layer: ``name (Class)``, output shape, parameter count and, for a model that
is not a plain chain of layers, the layers it is called on (``['x[0][0]']``). A field too
wide for its column continues on the next line, cut after a ``),`` / ``],`` / ``',``
where there is one; a blank line follows every layer. The totals give the parameters'
memory too::

    Model: "sequential"
    _________________________________________________________________
     Layer (type)                Output Shape              Param #
    =================================================================
     dense (Dense)               (None, 16)                176
    ...
    Total params: 308 (1.20 KB)

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     m = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
...     lines = []
...     m.summary(print_fn=lines.append)
>>> lines[4].rstrip(), lines[-4]
(' dense (Dense)               (None, 2)                 8', 'Total params: 8 (32.00 Byte)')
"""

from __future__ import annotations

__all__ = ["print_summary", "readable_memory_size"]

_BREAKS = ("),", "},", "],", "',")


def _class_name(layer) -> str:
    """The class a row names: TF's ``Functional`` for a `Model` built from inputs and
    outputs (TF's class of such a model), else the layer's own class."""
    if type(layer).__name__ == "Model" and layer.__dict__.get("_subclassed") is not True:
        return "Functional"
    return type(layer).__name__


def readable_memory_size(size: float) -> str:
    """``'1.20 KB'``: `size` bytes in the largest unit that keeps it at least 1."""
    for unit in ("Byte", "KB", "MB", "GB", "TB"):
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _weights_size(weights) -> int:
    seen, total = set(), 0
    for w in weights:
        if id(w) in seen:
            continue
        seen.add(id(w))
        total += (w.shape.num_elements() or 0) * w.dtype.base_dtype.size
    return total


def _rows(fields, positions, nested: int = 0) -> list[str]:
    """The lines of one table row: each field cut to its column (two blanks between
    columns), the rest carried to the next line; a layer of a nested model (`nested`
    levels deep, ``expand_nested``) between that many bars on each side."""
    left = [str(f) for f in fields]
    lines = []
    last = len(positions) - 1
    while any(left):
        line = ""
        for col, text in enumerate(left):
            start = positions[col - 1] if col else 0
            gap = 0 if col == last else 2
            width = positions[col] - start - gap - (0 if col == last else 1) - \
                (nested if col == 0 else 0)
            piece = text[:width]
            cuts = [piece.find(b) + len(b) for b in _BREAKS if piece.find(b) >= 0]
            if cuts:
                width = min(cuts)
                piece = piece[:width]
            if col == 0:
                line += "|" * nested + " "
            line += piece + " " * gap
            left[col] = text[width:]
            line += " " * (positions[col] - len(line) - (nested if col == last else 0))
        lines.append(line + "|" * nested)
    return lines


def _chain_like(model, nodes, sequential: bool) -> bool:
    """Whether `model` is a plain chain (one input, each layer called once on one tensor
    that nothing else reads): then no "Connected to" column, as in TF."""
    if sequential or not nodes:
        return True
    if len(model.inputs) != 1 or len(model.outputs) != 1:
        return False
    layers, consumed = set(), set()
    for node in nodes:
        if id(node.layer) in layers or len(node.input_tensors) > 1:
            return False
        layers.add(id(node.layer))
        for t in node.input_tensors:
            if id(t) in consumed:
                return False
            consumed.add(id(t))
    return True


def print_summary(model, shape_str, input_layer_cls, sequential: bool, line_length=None,
                  positions=None, print_fn=None, expand_nested: bool = False,
                  show_trainable: bool = False) -> None:
    """Print `model`'s table (see the module docstring) with `print_fn` (default
    `print`); `shape_str` formats a node's output tensors. `expand_nested`: a nested
    model's layers follow its row, framed by bars; `show_trainable`: a ``Trainable``
    column (Y / N), as TF's."""
    print_fn = print_fn or print
    nodes = list(model._network_nodes)
    chain = _chain_like(model, nodes, sequential)
    line_length = line_length or (65 if chain else 98)
    positions = positions or ([0.45, 0.85, 1.0] if chain else [0.3, 0.6, 0.7, 1.0])
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]
    headers = ["Layer (type)", "Output Shape", "Param #", "Connected to"][:len(positions)]
    if show_trainable:
        line_length += 11
        positions = [*positions, line_length]
        headers.append("Trainable")

    print_fn(f'Model: "{model.name}"')
    print_fn("_" * line_length)
    for line in _rows(headers, positions):
        print_fn(line)
    print_fn("=" * line_length)
    def fields_of(layer, owner, nested: int) -> list:
        own = [n for n in owner._network_nodes if n.layer is layer]
        node = own[0] if own else None
        if node is None and len(getattr(layer, "_inbound_nodes", ())) == 1:
            node = layer._inbound_nodes[0]  # a layer of a subclassed model, called once
        if isinstance(layer, input_layer_cls):
            shape = f"[{shape_str(layer._inbound_nodes[0].output_tensors)}]"
            inbound = []
        else:
            shape = shape_str(node.output_tensors) if node else "multiple"
            # a shared layer lists the inputs of each of its calls inside this model
            inbound = [f"{t._keras_history[0].name}[{t._keras_history[1]}]"
                       f"[{t._keras_history[2]}]"
                       for n in (own or [node]) for t in n.input_tensors] \
                if node and not nested else []
        fields = [f"{layer.name} ({_class_name(layer)})", shape, layer.count_params()]
        if not chain:
            fields.append(inbound)
        if show_trainable:
            fields.append("Y" if layer.trainable else "N")
        return fields

    def print_layer(layer, owner, nested: int, is_last: bool) -> None:
        for line in _rows(fields_of(layer, owner, nested), positions, nested):
            print_fn(line)
        inner = getattr(layer, "layers", None) if expand_nested else None
        if inner:
            bars = "|" * (nested + 1)
            print_fn(bars + "\u00af" * (line_length - 2 * nested - 2) + bars)
            for i, sub in enumerate(inner):
                is_last = i == len(inner) - 1  # as TF: no blank line after the frame
                print_layer(sub, layer, nested + 1, is_last)
            print_fn("|" * nested + "\u00af" * (line_length - 2 * nested) + "|" * nested)
        if not is_last:
            print_fn("|" * nested + " " * (line_length - 2 * nested) + "|" * nested)

    for layer in model.layers:
        print_layer(layer, model, 0, False)
    print_fn("=" * line_length)
    weights, trainable = model.weights, model.trainable_weights
    trainable_ids = {id(w) for w in trainable}
    frozen = [w for w in weights if id(w) not in trainable_ids]
    count = sum(w.shape.num_elements() or 0 for w in {id(w): w for w in weights}.values())
    count_trainable = sum(w.shape.num_elements() or 0
                          for w in {id(w): w for w in trainable}.values())
    print_fn(f"Total params: {count} ({readable_memory_size(_weights_size(weights))})")
    print_fn(f"Trainable params: {count_trainable} "
             f"({readable_memory_size(_weights_size(trainable))})")
    print_fn(f"Non-trainable params: {count - count_trainable} "
             f"({readable_memory_size(_weights_size(frozen))})")
    print_fn("_" * line_length)
