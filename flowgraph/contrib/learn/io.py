"""`tf.contrib.learn.io`: the input functions that moved to `tf.estimator.inputs`.

Example
-------
>>> import numpy as np, flowgraph as tf
>>> fn = tf.contrib.learn.io.numpy_input_fn({"x": np.zeros((4, 2))}, shuffle=False)
>>> callable(fn)
True
"""

from flowgraph.estimators.inputs import numpy_input_fn, pandas_input_fn

__all__ = ["numpy_input_fn", "pandas_input_fn"]
