"""The op library: one module per op family. Importing this package registers all ops
and installs the Tensor operators."""

from flowgraph.ops import (
    array_grad,
    array_ops,
    check_ops,
    clip_ops,
    control_flow_cond,
    control_flow_grad,
    control_flow_loops,
    control_flow_ops,
    data_flow_ops,
    gradients,
    math_grad,
    math_ops,
    math_reduce,
    nn_grad,
    nn_loss_ops,
    nn_ops,
    parsing_ops,
    random_ops,
    stack_ops,
    state_ops,
    training_ops,
    variables,
)
