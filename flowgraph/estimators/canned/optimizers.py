"""How canned estimators turn their `optimizer` argument into a `tf.train.Optimizer`.

A canned estimator takes its optimizer in one of three forms, resolved each time a
training graph is built (inside ``model_fn``):

| given | becomes |
| --- | --- |
| an `Optimizer` instance | itself |
| ``'Adagrad'``, ``'Adam'``, ``'Ftrl'``, ``'RMSProp'``, ``'SGD'`` | that class at the default rate |
| a callable | whatever it returns (must be an `Optimizer`), called once per graph |

The default learning rates are TensorFlow's (tensorflow_estimator 2.15):

| estimator | default optimizer | learning rate |
| --- | --- | --- |
| DNN | ``'Adagrad'`` | 0.05 |
| Linear | ``'Ftrl'`` | 0.2 (``optimizer=None``: ``min(0.2, 1/sqrt(n_columns))``) |
| Baseline | ``'Ftrl'`` | 0.3 |
| DNNLinearCombined, DNN part | ``'Adagrad'`` | 0.001 |
| DNNLinearCombined, linear part | ``'Ftrl'`` | ``min(0.005, 1/sqrt(n_linear_columns))`` |

Example
-------
>>> opt = get_optimizer_instance("Adagrad", learning_rate=DNN_LEARNING_RATE)
>>> type(opt).__name__, opt._learning_rate
('AdagradOptimizer', 0.05)
"""

from __future__ import annotations

import math

__all__ = ["get_optimizer_instance"]

DNN_LEARNING_RATE = 0.05
LINEAR_LEARNING_RATE = 0.2
BASELINE_LEARNING_RATE = 0.3
COMBINED_DNN_LEARNING_RATE = 0.001
COMBINED_LINEAR_LEARNING_RATE = 0.005


def _optimizer_classes() -> dict:
    from flowgraph.train.adagrad import AdagradOptimizer
    from flowgraph.train.adam import AdamOptimizer
    from flowgraph.train.ftrl import FtrlOptimizer
    from flowgraph.train.gradient_descent import GradientDescentOptimizer
    from flowgraph.train.rmsprop import RMSPropOptimizer

    return {
        "Adagrad": AdagradOptimizer,
        "Adam": AdamOptimizer,
        "Ftrl": FtrlOptimizer,
        "RMSProp": RMSPropOptimizer,
        "SGD": GradientDescentOptimizer,
    }


def optimizer_names() -> tuple[str, ...]:
    """The optimizer names a canned estimator accepts, sorted."""
    return tuple(sorted(_optimizer_classes()))


def get_optimizer_instance(opt, learning_rate=None):
    """The `Optimizer` described by `opt`: an instance, a name or a callable.

    Parameters
    ----------
    opt : Optimizer, str or callable
        A name is one of ``'Adagrad'``, ``'Adam'``, ``'Ftrl'``, ``'RMSProp'``, ``'SGD'``;
        a callable is called without arguments and must return an `Optimizer`.
    learning_rate : float, optional
        Required with a name; ignored otherwise.

    Raises
    ------
    ValueError
        An unknown name, a name without `learning_rate`, or anything that is not (and
        does not produce) an `Optimizer`.

    Example
    -------
    >>> get_optimizer_instance("Nesterov", 0.1)
    Traceback (most recent call last):
    ...
    ValueError: Unsupported optimizer name: Nesterov. Supported names are: \
('Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD')
    """
    from flowgraph.train.optimizer import Optimizer

    if isinstance(opt, str):
        classes = _optimizer_classes()
        if opt not in classes:
            raise ValueError(f"Unsupported optimizer name: {opt}. Supported names are: "
                             f"{optimizer_names()}")
        if learning_rate is None:
            raise ValueError("learning_rate must be specified when opt is string.")
        return classes[opt](learning_rate=learning_rate)
    given = opt
    if callable(opt) and not isinstance(opt, Optimizer):
        opt = opt()
    if not isinstance(opt, Optimizer):
        raise ValueError(
            f"The given object is not an Optimizer instance. Given: {given!r}"
            + ("" if opt is given else f" (it returned {opt!r})")
            + f". Pass a tf.train.Optimizer, one of the names {optimizer_names()}, or a "
            f"function returning an Optimizer.")
    return opt


def default_linear_learning_rate(num_feature_columns: int, cap: float) -> float:
    """TF's historical default for linear models: ``min(cap, 1 / sqrt(n))``."""
    return min(cap, 1.0 / math.sqrt(max(int(num_feature_columns), 1)))
