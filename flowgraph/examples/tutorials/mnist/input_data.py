"""``from tensorflow.examples.tutorials.mnist import input_data`` as flowgraph has it:
`read_data_sets` and the rest of `tf.contrib.learn.datasets.mnist`.

Example
-------
>>> from flowgraph.examples.tutorials.mnist import input_data
>>> mnist = input_data.read_data_sets("MNIST_data", fake_data=True)
>>> len(mnist.train.next_batch(3, fake_data=True)[0])
3
"""

from flowgraph.contrib.learn.mnist_data import (
    DEFAULT_SOURCE_URL,
    DataSet,
    dense_to_one_hot,
    extract_images,
    extract_labels,
    maybe_download,
    read_data_sets,
)

__all__ = ["DEFAULT_SOURCE_URL", "DataSet", "dense_to_one_hot", "extract_images",
           "extract_labels", "maybe_download", "read_data_sets"]
