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

from flowgraph.data import dataset as _dataset
from flowgraph.data import dataset_cardinality as _cardinality
from flowgraph.data import dataset_ops_experimental as experimental
from flowgraph.data import dataset_ops_prefetch as _prefetch
from flowgraph.data import dataset_ops_sources as _sources
from flowgraph.data import dataset_ops_transform as _transform
from flowgraph.data import dataset_ops_window as _window
from flowgraph.data import iterator as _iterator
from flowgraph.data import options as _options
from flowgraph.data.dataset import AUTOTUNE, Dataset
from flowgraph.data.dataset_ops_fixed_length import FixedLengthRecordDataset
from flowgraph.data.dataset_ops_sources import TextLineDataset
from flowgraph.data.dataset_ops_tfrecord import TFRecordDataset
from flowgraph.data.iterator import (
    Iterator,
    get_output_classes,
    get_output_shapes,
    get_output_types,
    make_initializable_iterator,
    make_one_shot_iterator,
)
from flowgraph.data.options import (
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    NumpyIterator,
    Options,
    ThreadingOptions,
)

# Dataset's methods build nodes and iterators from these modules, which import it.
_dataset._install_nodes(_sources, _transform, _prefetch, _iterator, _window,
                        experimental)

Dataset.with_options = _options.with_options
Dataset._count_elements = _cardinality.count_elements  # the DatasetCardinality kernel's
Dataset.options = _options.options

from flowgraph.data import dataset_ops_save as _save  # noqa: E402

# TF 2's saved-dataset directories: ``ds.save(path)`` (an op) and ``Dataset.load(path)``.
Dataset.save = _save.save
Dataset.load = staticmethod(_save.load)

DatasetV1 = Dataset

# The TypeSpec of a dataset (TF1 misc names).
from flowgraph.data.dataset_spec import DatasetSpec, _element_spec  # noqa: E402

# ``element_spec``: the nested TensorSpec of the elements (TF 1.15+ datasets and iterators).
Dataset.element_spec = property(_element_spec)
Iterator.element_spec = property(_element_spec)
# ``it.get_next_as_optional()``: the next element as an Optional (empty at the end).
Iterator.get_next_as_optional = experimental.get_next_as_optional
