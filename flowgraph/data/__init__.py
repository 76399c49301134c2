"""The `tf.data` namespace (TF 1.15 / ``tf.compat.v1.data``): re-exports only.

Example
-------
>>> import flowgraph as tf
>>> import flowgraph.data
>>> ds = tf.data.Dataset.range(4).batch(2)
>>> it = tf.data.make_one_shot_iterator(ds)
>>> with tf.Session() as sess:
...     print(sess.run(it.get_next()))
[0 1]
"""

from flowgraph.data import dataset_ops_experimental as experimental
from flowgraph.data.dataset import AUTOTUNE, Dataset
from flowgraph.data.dataset_ops_sources import TextLineDataset
from flowgraph.data.iterator import (
    Iterator,
    get_output_classes,
    get_output_shapes,
    get_output_types,
    make_initializable_iterator,
    make_one_shot_iterator,
)

DatasetV1 = Dataset
