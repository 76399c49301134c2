"""tf.test.TestCase (issue 15): sessions, evaluate and the assertions, checked under TF 2.15."""

from __future__ import annotations

import io
import os
import unittest

import numpy as np

import flowgraph as tf


def _run(case_class) -> unittest.TestResult:
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case_class)
    return unittest.TextTestRunner(stream=io.StringIO()).run(suite)


def test_sessions_evaluate_and_fresh_graphs():
    seen = {}

    class Case(tf.test.TestCase):
        def testSessions(self):
            with self.test_session() as s1:
                x = tf.constant([1.0, 2.0])
                self.assertAllEqual(x.eval(), [1.0, 2.0])
                self.assertAllEqual(self.evaluate(x * 2), [2.0, 4.0])
            with self.cached_session() as s2:
                seen["cached"] = s1 is s2
            with self.session() as s3:
                seen["new"] = s3 is not s1 and tf.get_default_session() is s3
            seen["outside"] = self.evaluate(tf.constant(3))

        def testFreshGraph(self):
            seen["ops"] = len(tf.get_default_graph().get_operations())
            tf.constant(1.0)
            seen["tmp"] = os.path.isdir(self.get_temp_dir())

    result = _run(Case)
    assert result.wasSuccessful(), result.errors + result.failures
    # test_session is collected by name, as in TensorFlow, and skips itself
    assert result.testsRun == 3 and len(result.skipped) == 1
    assert seen == {"cached": True, "new": True, "outside": 3, "ops": 0, "tmp": True}


def test_assertions_pass_and_fail():
    class Case(tf.test.TestCase):
        def testPass(self):
            x = tf.constant([1.0, 2.0])
            self.assertAllClose(x, [1.0, 2.0])
            self.assertAllClose({"a": x, "b": [[1.0], [2.0, 3.0]]},
                                {"a": np.array([1.0, 2.0]), "b": [[1.0], [2.0, 3.0]]})
            self.assertNear(1.0, 1.05, 0.1)
            self.assertArrayNear([1.0, 2.0], [1.01, 2.0], 0.02)
            self.assertShapeEqual(np.zeros((2, 3)), tf.zeros([2, 3]))

        def testCloseValues(self):
            self.assertAllClose([1.0, 2.0], [1.0, 2.1])

        def testBroadcastIsAMismatch(self):
            self.assertAllClose([1.0], [1.0, 1.0])

        def testEqual(self):
            self.assertAllEqual([1, 2], [1, 3])

        def testDictKeys(self):
            self.assertAllClose({"a": 1.0}, {"b": 1.0})

    result = _run(Case)
    failed = sorted(test.id().rsplit(".", 1)[-1] for test, _ in result.failures)
    assert not result.errors
    assert failed == ["testBroadcastIsAMismatch", "testCloseValues", "testDictKeys",
                      "testEqual"]
