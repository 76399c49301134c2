"""``flowgraph inspect_checkpoint``: TensorFlow's ``inspect_checkpoint`` tool, same flags.

``--file_name F`` lists every tensor of checkpoint F with its dtype and shape (read
from the headers alone); ``--tensor_name T`` prints one tensor's value;
``--all_tensors`` prints every value; ``--all_tensor_names`` only the names. Every form
ends with the total number of parameters. As in TensorFlow, a failure (a missing
checkpoint, a corrupt file) is printed, not raised.

Example
-------
>>> import os, tempfile, numpy as np
>>> from flowgraph.train.checkpoint_utils import write_checkpoint
>>> path = os.path.join(tempfile.mkdtemp(), "model.ckpt-1")
>>> write_checkpoint(path, {"w": np.arange(4, dtype=np.float32).reshape(2, 2)})
>>> print_tensors_in_checkpoint_file(path, "", False)
w (DT_FLOAT) [2,2]
<BLANKLINE>
# Total number of params: 4
>>> print_tensors_in_checkpoint_file(path, "w", False)
tensor: w (float32) [2, 2]
[[0. 1.]
 [2. 3.]]
# Total number of params: 4
"""

from __future__ import annotations

import argparse
import re

import numpy as np

from flowgraph.framework.tf_formats.text_format import datatype_name
from flowgraph.train.checkpoint_utils import load_checkpoint

__all__ = ["add_parser", "print_tensors_in_checkpoint_file"]


def _listing(shapes: dict, dtypes: dict) -> str:
    """TensorFlow's ``CheckpointReader.debug_string``: ``name (DT_FLOAT) [2,3]`` lines."""
    return "".join(f"{name} ({datatype_name(dtypes[name].as_datatype_enum)}) "
                   f"[{','.join(str(d) for d in shapes[name])}]\n" for name in sorted(shapes))


def _total_params(shapes: dict, count_exclude_pattern: str) -> int:
    if count_exclude_pattern:
        pattern = re.compile(count_exclude_pattern)
        excluded = [k for k in shapes if pattern.search(k)]
        params = sum(int(np.prod(shapes[k], dtype=np.int64)) for k in excluded)
        print(f"# Excluding {len(excluded)} tensors ({params} params) that match "
              f"{count_exclude_pattern} when counting.")
        shapes = {k: v for k, v in shapes.items() if k not in excluded}
    return sum(int(np.prod(s, dtype=np.int64)) for s in shapes.values())


def print_tensors_in_checkpoint_file(file_name: str, tensor_name: str, all_tensors: bool,
                                     all_tensor_names: bool = False,
                                     count_exclude_pattern: str = "") -> None:
    """Print the tensors of a checkpoint as TensorFlow's function of the same name does.

    With `all_tensors` (values) or `all_tensor_names`: a ``tensor: NAME (DTYPE) SHAPE``
    line per tensor, sorted. Without them and without `tensor_name`: the checkpoint's
    listing (``NAME (DT_FLOAT) [2,3]``). With `tensor_name`: that tensor's line and
    value. Then ``# Total number of params: N`` (tensors whose name matches
    `count_exclude_pattern` not counted). Errors are printed, not raised.

    Example
    -------
    >>> import os, tempfile, numpy as np
    >>> from flowgraph.train.checkpoint_utils import write_checkpoint
    >>> path = os.path.join(tempfile.mkdtemp(), "ck")
    >>> write_checkpoint(path, {"b": np.zeros(3, np.int32)})
    >>> print_tensors_in_checkpoint_file(path, "", False, all_tensor_names=True)
    tensor: b (int32) [3]
    # Total number of params: 3
    """
    try:
        _print_tensors(file_name, tensor_name, all_tensors, all_tensor_names,
                       count_exclude_pattern)
    except _TensorNotFound:
        print(f"Tensor {tensor_name} not found in checkpoint")
    except Exception as e:  # the tool reports any failure as text, as TensorFlow's does
        print(str(e))
        if "Data loss" in str(e) and any(s in file_name for s in (".index", ".meta", ".data")):
            prefix = ".".join(file_name.split(".")[:-1])
            print("\nIt's likely that this is a V2 checkpoint and you need to provide the "
                  "filename\n*prefix*.  Try removing the '.' and extension.  Try:\n"
                  f"inspect checkpoint --file_name = {prefix}")


class _TensorNotFound(ValueError):
    pass


def _print_tensors(file_name: str, tensor_name: str, all_tensors: bool,
                   all_tensor_names: bool, count_exclude_pattern: str) -> None:
    """`print_tensors_in_checkpoint_file`, raising what it would print."""
    with load_checkpoint(file_name) as reader:
        shapes = reader.get_variable_to_shape_map()
        dtypes = reader.get_variable_to_dtype_map()
        if all_tensors or all_tensor_names:
            for key in sorted(shapes):
                print(f"tensor: {key} ({dtypes[key].name}) {list(shapes[key])}")
                if all_tensors:
                    print(reader.get_tensor(key))
        elif not tensor_name:
            print(_listing(shapes, dtypes))
        elif not reader.has_tensor(tensor_name):
            raise _TensorNotFound(f"Key {tensor_name} not found in checkpoint {file_name}; "
                                  f"it holds: {', '.join(sorted(shapes)[:20])}")
        else:
            print(f"tensor: {tensor_name} ({dtypes[tensor_name].name}) "
                  f"{list(shapes[tensor_name])}")
            print(reader.get_tensor(tensor_name))
        print(f"# Total number of params: {_total_params(shapes, count_exclude_pattern)}")


def _run(args) -> int:
    # The command reports a failure on stderr with exit code 1 (the function prints it).
    _print_tensors(args.file_name, args.tensor_name or "", args.all_tensors,
                   args.all_tensor_names, "")
    return 0


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``inspect_checkpoint`` to the `flowgraph` command's subparsers."""
    p = sub.add_parser("inspect_checkpoint", help="list or print the tensors of a checkpoint",
                       description="TensorFlow's inspect_checkpoint: the names, dtypes and "
                                   "shapes of a checkpoint's tensors, or their values.")
    p.add_argument("--file_name", required=True,
                   help="checkpoint prefix (model.ckpt-STEP) or a directory (its latest)")
    p.add_argument("--tensor_name", default="", help="print this tensor's value")
    p.add_argument("--all_tensors", action="store_true", help="print every tensor's value")
    p.add_argument("--all_tensor_names", action="store_true",
                   help="print every tensor's name")
    p.set_defaults(run_command=_run)
    return p
