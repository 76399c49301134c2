# ruff: noqa: E402, E701
"""A TF1-era program run by tests/compat/test_module_gapfill.py (TF_MODULE picks the library)."""
import importlib
import os

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
import tempfile

# Export a regression model, then fix the method name of its signature in place.
export_dir = os.path.join(tempfile.mkdtemp(), "1")
with tf.Graph().as_default():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable([[1.0], [2.0]], name="w")
    y = tf.identity(tf.matmul(x, w), name="y")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})
updater = tf.saved_model.signature_def_utils.MethodNameUpdater(export_dir)
updater.replace_method_name(signature_key="serving_default",
                            method_name="tensorflow/serving/regress", tags="serve")
updater.save()
with tf.Graph().as_default(), tf.Session() as sess:
    mg = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export_dir)
    sig = mg.signature_def["serving_default"]
    print(sig.method_name)
    print(sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: [[1.0, 1.0]]}))
    print(sorted(k for k in mg.collection_def if k in (tf.saved_model.constants.MAIN_OP_KEY,
          tf.saved_model.constants.LEGACY_INIT_OP_KEY, "variables")))
print(sorted(os.listdir(export_dir)))
