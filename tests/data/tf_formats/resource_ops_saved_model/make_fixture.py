"""Writes tests/data/tf_formats/resource_ops_saved_model/saved_model with real TensorFlow
(run once: ``/tmp/tf-oracle-venv/bin/python make_fixture.py OUT_DIR``): a resource
variable ``w`` read by ``y = x @ w`` (signature ``serving_default``) and written by a
slice assignment (``ResourceStridedSliceAssign``) and an N-d scatter
(``ResourceScatterNdAdd``), each the output of signature ``update``. Prints what
TensorFlow's loader gives for the variables, ``y`` and ``update``."""

import importlib
import os
import sys

import numpy as np

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ:
    tf.disable_v2_behavior()

out = os.path.join(sys.argv[1], "saved_model")
with tf.Graph().as_default():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    row = tf.placeholder(tf.float32, [2], name="row")
    delta = tf.placeholder(tf.float32, [], name="delta")
    w = tf.get_variable("w", initializer=np.arange(6, dtype=np.float32).reshape(3, 2),
                        use_resource=True)
    y = tf.matmul(x, w, name="y")
    assigned = tf.identity(w[1].assign(row), name="assigned")
    with tf.control_dependencies([assigned]):
        added = tf.identity(tf.scatter_nd_add(w, [[0, 0], [2, 1]], tf.stack([delta, delta])),
                            name="added")
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        b = tf.saved_model.builder.SavedModelBuilder(out)
        b.add_meta_graph_and_variables(s, ["serve"], signature_def_map={
            "serving_default": tf.saved_model.predict_signature_def({"x": x}, {"y": y}),
            "update": tf.saved_model.predict_signature_def(
                {"row": row, "delta": delta}, {"assigned": assigned, "added": added})})
        b.save()
with tf.Graph().as_default() as g, tf.Session() as s:
    tf.saved_model.loader.load(s, ["serve"], out)
    print([(type(v).__name__, v.name, v.dtype.name, v.op.type) for v in tf.global_variables()])
    print(sorted({o.type for o in g.get_operations()} & {
        "VarHandleOp", "VariableV2", "ResourceStridedSliceAssign", "ResourceScatterNdAdd"}))
    X = [[1.0, 0.0, -1.0], [0.5, 2.0, 1.0]]
    print("y", s.run("y:0", {"x:0": X}).tolist())
    print("update", s.run(["assigned:0", "added:0"], {"row:0": [7.0, -7.0], "delta:0": 0.5}))
    print("y after", s.run("y:0", {"x:0": X}).tolist())
