"""Train every canned estimator named on the command line a few steps on tiny data and
export it as a SavedModel under ``BASE/<name>/<version>``; run in a fresh interpreter by
`test_canned_serving.py` (never collected by pytest: no ``test_`` prefix).

    python canned_export.py BASE LinearClassifier DNNRegressor ...
"""

from __future__ import annotations

import os
import sys

import numpy as np

import flowgraph as tf
from flowgraph.estimators import canned
from flowgraph.estimators.export import build_parsing_serving_input_receiver_fn
from flowgraph.estimators.inputs import numpy_input_fn
from flowgraph.estimators.run_config import RunConfig

ESTIMATORS = ("LinearClassifier", "LinearRegressor", "DNNClassifier", "DNNRegressor",
              "DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor",
              "BaselineClassifier", "BaselineRegressor")


def build(name: str, model_dir: str):
    columns = [tf.feature_column.numeric_column("x", shape=[2])]
    config = RunConfig(tf_random_seed=1)
    kwargs = {"model_dir": model_dir, "config": config}
    if name.startswith("DNNLinearCombined"):
        kwargs.update(linear_feature_columns=columns, dnn_feature_columns=columns,
                      dnn_hidden_units=[4])
    elif name.startswith("DNN"):
        kwargs.update(feature_columns=columns, hidden_units=[4])
    elif name.startswith("Linear"):
        kwargs.update(feature_columns=columns)
    return getattr(canned, name)(**kwargs)


def main(base: str, names: list[str]) -> None:
    rng = np.random.RandomState(0)
    x = rng.uniform(-1.0, 1.0, size=(16, 2)).astype(np.float32)
    for name in names:
        y = (x[:, 0] > 0).astype(np.int64) if name.endswith("Classifier") else x.sum(1)
        est = build(name, os.path.join(base, "model_dirs", name))
        est.train(numpy_input_fn({"x": x}, y.reshape(-1, 1), batch_size=8, num_epochs=None,
                                 shuffle=True), steps=3)
        receiver = build_parsing_serving_input_receiver_fn(
            {"x": tf.io.FixedLenFeature([2], tf.float32)})
        path = est.export_saved_model(os.path.join(base, name), receiver)
        # the default format is TensorFlow's: the fresh server must read saved_model.pb
        assert os.path.isfile(os.path.join(os.fsdecode(path), "saved_model.pb")), path
        print(name, os.fsdecode(path), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] or list(ESTIMATORS))
