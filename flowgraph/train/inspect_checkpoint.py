"""``flowgraph inspect_checkpoint``: TensorFlow's ``inspect_checkpoint`` tool, same flags.

``--file_name F`` lists every tensor of checkpoint F with its dtype and shape (read
from the headers alone); ``--tensor_name T`` prints one tensor's value;
``--all_tensors`` prints every value; ``--all_tensor_names`` only the names. A
corrupt file is reported as one line naming the file (exit code 1).

Example
-------
>>> import os, tempfile, numpy as np
>>> from flowgraph.train.checkpoint_utils import write_checkpoint
>>> path = os.path.join(tempfile.mkdtemp(), "model.ckpt-1")
>>> write_checkpoint(path, {"w": np.arange(4, dtype=np.float32).reshape(2, 2)})
>>> print_tensors_in_checkpoint_file(path, "", False)
w (float32) [2, 2]
<BLANKLINE>
>>> print_tensors_in_checkpoint_file(path, "w", False)
tensor_name:  w
[[0. 1.]
 [2. 3.]]
"""

from __future__ import annotations

import argparse

from flowgraph.train.checkpoint_utils import load_checkpoint

__all__ = ["add_parser", "print_tensors_in_checkpoint_file"]


def print_tensors_in_checkpoint_file(file_name: str, tensor_name: str, all_tensors: bool,
                                     all_tensor_names: bool = False) -> None:
    """Print tensors of a checkpoint (TensorFlow's function of the same name).

    Without `tensor_name` and the two flags: every tensor's name, dtype and shape.
    """
    with load_checkpoint(file_name) as reader:
        shapes = reader.get_variable_to_shape_map()
        if all_tensors or all_tensor_names:
            for key in sorted(shapes):
                print("tensor_name: ", key)
                if all_tensors:
                    print(reader.get_tensor(key))
        elif not tensor_name:
            print(reader.debug_string().decode("utf-8"))
        else:
            if not reader.has_tensor(tensor_name):
                names = ", ".join(sorted(shapes)[:20])
                raise ValueError(f"Key {tensor_name} not found in checkpoint {file_name}; "
                                 f"it holds: {names}")
            print("tensor_name: ", tensor_name)
            print(reader.get_tensor(tensor_name))


def _run(args) -> int:
    print_tensors_in_checkpoint_file(args.file_name, args.tensor_name or "",
                                     args.all_tensors, args.all_tensor_names)
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
