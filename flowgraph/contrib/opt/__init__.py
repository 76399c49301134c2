"""`tf.contrib.opt`: the optimizers TF1 programs imported from contrib: decoupled weight
decay (`AdamWOptimizer`, `MomentumWOptimizer`, `extend_with_decoupled_weight_decay`) and
`LazyAdamOptimizer`; `MovingAverageOptimizer` (averaged weights and a swapping saver);
`VariableClippingOptimizer` (norm clipping after each update);
`ScipyOptimizerInterface` (SciPy's minimizers, L-BFGS-B by default,
on a graph's loss); the others TF1 moved to core are aliased (`NadamOptimizer` is not
provided).

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.opt.AdamWOptimizer(1e-4, learning_rate=1e-3).get_name()
'AdamW'
"""

from flowgraph.contrib.opt.external_optimizer import (
    ExternalOptimizerInterface,
    ScipyOptimizerInterface,
)
from flowgraph.contrib.opt.lazy_adam import LazyAdamOptimizer
from flowgraph.contrib.opt.moving_average_optimizer import MovingAverageOptimizer
from flowgraph.contrib.opt.variable_clipping import VariableClippingOptimizer
from flowgraph.contrib.opt.weight_decay import (
    AdamWOptimizer,
    DecoupledWeightDecayExtension,
    MomentumWOptimizer,
    extend_with_decoupled_weight_decay,
)

__all__ = [
    "AdamWOptimizer",
    "DecoupledWeightDecayExtension",
    "ExternalOptimizerInterface",
    "LazyAdamOptimizer",
    "MomentumWOptimizer",
    "MovingAverageOptimizer",
    "ScipyOptimizerInterface",
    "VariableClippingOptimizer",
    "extend_with_decoupled_weight_decay",
]
