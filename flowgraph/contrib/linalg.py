"""`tf.contrib.linalg`: TF 1.x's home of the linear operators, now `tf.linalg`'s.

Every ``LinearOperator*`` class here is the `tf.linalg` class itself (the same object),
so ``isinstance`` checks and code mixing both paths work.

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.linalg.LinearOperatorDiag is tf.linalg.LinearOperatorDiag
True
"""

from flowgraph import linalg as _linalg

__all__ = sorted(n for n in dir(_linalg) if n.startswith("LinearOperator"))

globals().update({n: getattr(_linalg, n) for n in __all__})
