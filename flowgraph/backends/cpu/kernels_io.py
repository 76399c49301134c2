"""CPU kernel for ``RestoreV2`` (`flowgraph/ops/io_ops.py`): tensors read from a
checkpoint file when the op runs (`tf.train.init_from_checkpoint`)."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.checkpoint_file import CheckpointReader


def _text(x) -> str:
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)


@cpu_kernel("RestoreV2")
def restore_v2(prefix, tensor_names, shape_and_slices, *, dtypes):
    """Read tensors `tensor_names` of the checkpoint file `prefix`, checking dtypes."""
    with CheckpointReader(_text(np.asarray(prefix).item())) as reader:
        outs = []
        for name, dtype in zip(np.asarray(tensor_names).reshape(-1), dtypes):
            value = reader.get_tensor(_text(name))
            want = _dtypes.as_dtype(dtype).base_dtype
            if want != _dtypes.string and value.dtype != want.as_numpy_dtype:
                raise errors.InvalidArgumentError(
                    None, None,
                    f"RestoreV2: tensor '{_text(name)}' in checkpoint {reader.path} has dtype "
                    f"{value.dtype} but {want.name} was requested; restore it into a "
                    f"variable of dtype {value.dtype} or cast after restoring.")
            outs.append(value)
    return tuple(outs) if len(outs) != 1 else outs[0]
