"""`tf.keras.experimental` (TF 1.x mode): the cosine learning-rate schedules (those of
`tf.keras.optimizers.schedules`), and ``LinearModel`` / ``WideDeepModel``
(`flowgraph.keras.linear_models`, attached by `flowgraph.keras`).

A schedule is a callable ``schedule(step) -> learning rate`` (a float32 tensor), with
Keras' arguments and ``get_config``. In graph mode, feed it the global step and give
the result to a `tf.train` optimizer, or give it to a Keras optimizer as its
``learning_rate``. ``SequenceFeatures`` (a layer over sequence feature columns) is not
provided.

Example
-------
>>> import flowgraph as tf
>>> schedule = tf.keras.experimental.CosineDecay(0.1, decay_steps=10)
>>> round(float(tf.Session().run(schedule(5))), 4)
0.05
"""

from __future__ import annotations

from flowgraph.keras.optimizers_schedules import CosineDecay, CosineDecayRestarts

__all__ = ["CosineDecay", "CosineDecayRestarts"]
