"""The `tf.random` namespace: re-exports only."""

from flowgraph.framework.graph import get_seed, set_random_seed

# Stateless samplers, seed derivation and the candidate samplers of tf.nn (TF 1.15's
# tf.random names).
from flowgraph.ops.candidate_sampling_ops import (
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from flowgraph.ops.misc_compat_ops import random_poisson as poisson
from flowgraph.ops.random_extra_ops import random_gamma as gamma
from flowgraph.ops.random_generator import (
    Algorithm,
    Generator,
    create_rng_state,
    get_global_generator,
    set_global_generator,
)
from flowgraph.ops.random_ops import categorical, multinomial, truncated_normal
from flowgraph.ops.random_ops import random_normal as normal
from flowgraph.ops.random_ops import random_shuffle as shuffle
from flowgraph.ops.random_ops import random_uniform as uniform
from flowgraph.ops.random_stateless_ops import (
    fold_in,
    split,
    stateless_binomial,
    stateless_categorical,
    stateless_gamma,
    stateless_multinomial,
    stateless_normal,
    stateless_parameterized_truncated_normal,
    stateless_poisson,
    stateless_truncated_normal,
    stateless_uniform,
)
from flowgraph.random import experimental
