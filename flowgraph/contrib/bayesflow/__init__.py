"""`tf.contrib.bayesflow`: TF 1.x's Monte Carlo helpers (`monte_carlo`).

Example
-------
>>> import flowgraph as tf
>>> mc = tf.contrib.bayesflow.monte_carlo
>>> with tf.Session() as sess:
...     print(sess.run(mc.expectation(tf.square, tf.constant([1., 2., 3.]))).round(4))
4.6667
"""

from flowgraph.contrib.bayesflow import monte_carlo

__all__ = ["monte_carlo"]
