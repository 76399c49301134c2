"""The sample and parameter checks TF's distributions add under ``validate_args``.

Each returns its tensor behind a ``control_dependency`` Identity, as TensorFlow's
``with_dependencies`` does, so the checks run whenever the tensor is used.
"""

from __future__ import annotations

import numpy as np

from flowgraph.distributions import _ops as o
from flowgraph.framework import dtypes as _dtypes

__all__ = ["counts_summing_to", "embed_check_categorical_event_shape",
           "embed_check_nonnegative_integer_form"]

_INT_FOR_FLOAT = {_dtypes.float16: _dtypes.int16, _dtypes.float32: _dtypes.int32,
                  _dtypes.float64: _dtypes.int64}


def embed_check_nonnegative_integer_form(x, name="embed_check_nonnegative_integer_form"):
    """`x` after checks that it is non-negative and (for floats) holds whole numbers.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.distributions._checks import embed_check_nonnegative_integer_form
    >>> with tf.Session() as sess:
    ...     print(sess.run(embed_check_nonnegative_integer_form([1., 2.])))
    [1. 2.]
    """
    with o.name_scope(name, values=[x]):
        x = o.convert_to_tensor(x, name="x")
        checks = [o.assert_non_negative(x, message=f"'{x}' must be non-negative.")]
        if not x.dtype.is_integer:
            with o.name_scope("assert_integer_form", values=[x]):
                as_int = o.cast(o.cast(x, _INT_FOR_FLOAT[x.dtype.base_dtype]), x.dtype)
                checks.append(o.assert_equal(
                    x, as_int, message=f"'{x}' cannot contain fractional components."))
        return o.with_dependencies(checks, x)


def counts_summing_to(counts, total_count, message):
    """Multinomial-style `counts`: whole, non-negative, summing to `total_count`."""
    counts = embed_check_nonnegative_integer_form(counts)
    return o.with_dependencies(
        [o.assert_equal(total_count, o.reduce_sum(counts, -1), message=message)], counts)


def embed_check_categorical_event_shape(param):
    """`param` (logits or probs) after TF's static check of its class count: at least
    one axis, at least two classes, and no more than its float dtype counts exactly.
    An unknown class count is passed through unchecked."""
    x = o.convert_to_tensor(param, name="categorical_param")
    if not x.dtype.is_floating:
        raise TypeError(f"Unable to validate size of unrecognized dtype ({x.dtype.name}).")
    if x.shape.ndims == 0:
        raise ValueError("A categorical-distribution parameter must have at least 1 "
                         "dimension.")
    event_size = x.shape[-1] if x.shape.ndims is not None else None
    event_size = getattr(event_size, "value", event_size)
    if event_size is not None:
        if event_size < 2:
            raise ValueError("A categorical-distribution parameter must have at least 2 "
                             "events.")
        largest = 2 ** (np.finfo(x.dtype.as_numpy_dtype).nmant + 1)
        if event_size > largest:
            raise ValueError(f"Number of classes exceeds `dtype` precision, i.e., "
                             f"{x.dtype.name} implies shape ({event_size}) cannot exceed "
                             f"{largest}.")
    return x
