"""The `tf.random.experimental` namespace: re-exports only."""

from flowgraph.ops.random_generator import (
    Algorithm,
    Generator,
    create_rng_state,
    get_global_generator,
    set_global_generator,
)
from flowgraph.ops.random_index_shuffle_ops import random_index_shuffle as index_shuffle
from flowgraph.ops.random_shuffle_stateless_ops import stateless_shuffle
from flowgraph.ops.random_stateless_ops import fold_in as stateless_fold_in
from flowgraph.ops.random_stateless_ops import split as stateless_split

__all__ = ["Algorithm", "Generator", "create_rng_state", "get_global_generator",
           "index_shuffle", "set_global_generator", "stateless_fold_in", "stateless_shuffle",
           "stateless_split"]
