# ruff: noqa: E402, E701
"""A TF1-era program run by tests/compat/test_module_gapfill.py (TF_MODULE picks the library)."""
import importlib
import os

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
import io
import unittest

import numpy as np


class MathTest(tf.test.TestCase):
    def testSquare(self):
        with self.cached_session() as sess:
            x = tf.constant([1.0, 2.0, 3.0])
            self.assertAllClose(sess.run(tf.square(x)), [1.0, 4.0, 9.0])
    def testEvaluateAndShape(self):
        x = tf.reshape(tf.range(6), [2, 3])
        self.assertAllEqual(self.evaluate(x), [[0, 1, 2], [3, 4, 5]])
        self.assertShapeEqual(np.zeros([2, 3]), x)
    def testOpError(self):
        with self.session() as sess:
            with self.assertRaisesOpError("must be positive"):
                sess.run(tf.debugging.assert_positive(tf.constant([-1.0]),
                                                      message="must be positive"))
    @tf.test.disable_with_predicate(pred=lambda: True, skip_message="disabled here")
    def testDisabled(self):
        self.fail("should not run")
    def testTempDir(self):
        self.assertTrue(tf.io.gfile.isdir(self.get_temp_dir()))
suite = unittest.defaultTestLoader.loadTestsFromNames(
    ["testSquare", "testEvaluateAndShape", "testOpError", "testDisabled", "testTempDir"], MathTest)
result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
print("ran", result.testsRun, "failures", len(result.failures), "errors", len(result.errors),
      "skipped", [r for _, r in result.skipped])
print(tf.test.benchmark_config().graph_options.rewrite_options.dependency_optimization)
