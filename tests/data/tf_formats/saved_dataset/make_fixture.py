"""Writes the fixtures of tests/data/test_dataset_save_load.py with real TensorFlow 2.15 (run
once: ``/tmp/tf-oracle-venv/bin/python make_fixture.py OUT_DIR``).

``plain/`` and ``gz/``: ``Dataset.save`` run in a TF1-mode session on five elements
``{"a": i, "b": (float32 [i, 2i], tf.strings.as_string(i))}`` for i in 0..4; ``gz/``
with ``compression="GZIP"`` and ``shard_func=lambda e: e["a"] % 2`` (two shards).
"""

import os
import sys

import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def main(out: str) -> None:
    ds = tf.data.Dataset.range(5).map(lambda x: {
        "a": x, "b": (tf.cast(x, tf.float32) * [1.0, 2.0], tf.strings.as_string(x))})
    with tf.Session() as sess:
        sess.run(ds.save(os.path.join(out, "plain")))
        sess.run(ds.save(os.path.join(out, "gz"), compression="GZIP",
                         shard_func=lambda e: e["a"] % 2))


if __name__ == "__main__":
    main(sys.argv[1])
