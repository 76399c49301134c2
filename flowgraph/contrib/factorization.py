"""`tf.contrib.factorization`: k-means clustering (`KMeansClustering`, the Estimator that
TF 2.15 keeps as ``tf.compat.v1.estimator.experimental.KMeans``, and `KMeans`, the graph
class under it) with its constants.

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.factorization.KMeansClustering is tf.compat.v1.estimator.experimental.KMeans
True
"""

from __future__ import annotations

from flowgraph.estimators.canned.kmeans import KMeansClustering
from flowgraph.ops.clustering_ops import (
    COSINE_DISTANCE,
    KMC2_INIT,
    KMEANS_PLUS_PLUS_INIT,
    RANDOM_INIT,
    SQUARED_EUCLIDEAN_DISTANCE,
    KMeans,
)

__all__ = [
    "COSINE_DISTANCE",
    "KMC2_INIT",
    "KMEANS_PLUS_PLUS_INIT",
    "RANDOM_INIT",
    "SQUARED_EUCLIDEAN_DISTANCE",
    "KMeans",
    "KMeansClustering",
]
