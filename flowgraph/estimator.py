"""`flowgraph.estimator`: TF's name for `flowgraph.estimators` (the same module object)."""

import sys

from flowgraph import estimators

sys.modules[__name__] = estimators
