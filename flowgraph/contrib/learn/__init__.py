"""`tf.contrib.learn`, reduced to what TF1 tutorials still import from it:
`preprocessing.VocabularyProcessor`, and `ModeKeys` / `RunConfig` aliases of the
`tf.estimator` ones.

Example
-------
>>> import flowgraph as tf
>>> vp = tf.contrib.learn.preprocessing.VocabularyProcessor(3)
>>> [row.tolist() for row in vp.fit_transform(["a b", "b c d"])]
[[1, 2, 0], [2, 3, 4]]
"""

from flowgraph.contrib.learn import preprocessing
from flowgraph.estimators import ModeKeys, RunConfig

__all__ = ["ModeKeys", "RunConfig", "preprocessing"]
