"""Test support: serialized `tf.train.Example` protos built from Python lists."""

from __future__ import annotations

import flowgraph as tf


def serialized_example(**features) -> bytes:
    """An Example whose features are float, int64 or bytes lists, by their first value.

    >>> len(serialized_example(a=[1.0], n=[2], s=[b"x"])) > 0
    True
    """
    feature = {}
    for key, values in features.items():
        if isinstance(values[0], float):
            feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
        elif isinstance(values[0], int):
            feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        else:
            feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
