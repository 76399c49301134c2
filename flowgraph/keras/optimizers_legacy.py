"""`tf.keras.optimizers.legacy`: in TF 2.15 the same optimizer classes that
`tf.keras.optimizers` gives a TF1 (graph-mode) program, under a second name.

Example
-------
>>> import flowgraph as tf
>>> tf.keras.optimizers.legacy.Adam is tf.keras.optimizers.Adam
True
"""

from flowgraph.keras.optimizers import (
    SGD,
    Adadelta,
    Adagrad,
    Adam,
    Adamax,
    Ftrl,
    Nadam,
    Optimizer,
    RMSprop,
)

__all__ = ["SGD", "Adadelta", "Adagrad", "Adam", "Adamax", "Ftrl", "Nadam", "Optimizer",
           "RMSprop"]
