"""TF1 training programs whose values depend on the optimizer's arithmetic, sweep 13 (area
``optim``), run under TensorFlow 2.15 and flowgraph with the tf-oracle; TensorFlow's printed
values are inline.

The programs (2016-2019 style): a linear-regression "optimizer zoo" training the same
model with every ``tf.train`` optimizer under non-default arguments (Adam beta/epsilon and
a custom name, Adagrad's initial accumulator, Adadelta rho, centered RMSProp with
momentum, Nesterov momentum, Ftrl with l1/l2/shrinkage and ``learning_rate_power``,
the proximal optimizers, AdagradDA) printing slot names, ``optimizer.variables()`` and
slot values; every learning-rate schedule (staircase ``exponential_decay``,
``piecewise_constant`` on an int64 step, cyclic ``polynomial_decay``,
``cosine_decay(_restarts)``, ``(noisy_)linear_cosine_decay`` under a graph seed,
``inverse_time_decay``, ``natural_exp_decay``, a warm-up ``minimum``) driving SGD; an
embedding trained through ``embedding_lookup``/``gather`` with repeated ids under each
optimizer, with ``clip_by_norm`` on the IndexedSlices gradient; gradient accumulation
over mini-batches (``assign_add`` into accumulators) after ``clip_by_global_norm``, with
``clip_by_average_norm``, ``tf.gradients`` gating/aggregation, an
``ExponentialMovingAverage`` on the global step (``average_name``,
``variables_to_restore``) and zero-debiased averages of a tensor and through
``assign_moving_average``; Adam under an ``exponential_decay`` rate saved with its slots
and resumed in a fresh graph (``_lr_t`` style attributes, ``_get_beta_accumulators``,
``list_variables``, a partial restore and the ``NotFoundError`` of a different
optimizer); ``tf.contrib.opt``'s ``AdamWOptimizer``, ``MomentumWOptimizer``,
``LazyAdamOptimizer`` and ``extend_with_decoupled_weight_decay`` (SGD, Adagrad) on an
embedding model with ``decay_var_list``; ``tf.contrib.opt.MovingAverageOptimizer`` with its
``swapping_saver`` restored into an evaluation graph; every ``gate_gradients`` x
``aggregation_method`` pair with the errors of ``compute_gradients``/``apply_gradients``;
resource variables (``use_resource=True``) under each optimizer and a user-written
``tf.train.Optimizer`` subclass (slots, ``_resource_apply_*``) with a fed learning rate,
plus ``piecewise_constant``'s errors; a GAN's two Adams (a callable rate, a fed
``beta1``, one optimizer minimized twice) reading the optimizers' hyperparameter tensors
(``_lr_t``, ``_learning_rate_tensor``, ...); and an ``Estimator`` whose ``model_fn`` clips
centered RMSProp's gradients under ``cosine_decay_restarts`` and averages the weights.

TensorFlow 2.15 has no ``tf.contrib``: the contrib programs' values come from TF 1.15's
``contrib/opt`` classes rebuilt on TF 2.15's optimizers (their logic, unchanged, with the
decay ordered after the gradient it follows: TF1's ref variables leave that a race, which
gave different values run to run) and with ``minimize(decay_var_list=...)`` reaching the
decay as documented (TF 1.15's own ``apply_gradients`` reset the list, so its
``minimize`` decayed every variable).

Classes of discrepancy found and fixed (one focused test each below):

* Decoupled weight decay (``AdamWOptimizer``, ``MomentumWOptimizer``,
  ``extend_with_decoupled_weight_decay``) on a sparse gradient decayed a row once per
  repeated index; TensorFlow's base optimizer sums repeated indices before
  ``_apply_sparse``, so each touched row decays once.
* ``GradientDescentOptimizer`` applied a sparse gradient through ``_apply_sparse``, so a
  subclass's ``_apply_sparse`` (decoupled weight decay, a program's own) ran on it;
  TensorFlow scatters the rows straight into the variable (an SGDW embedding is not
  decayed).
* ``LazyAdamOptimizer`` was named ``LazyAdam``; TF1's keeps Adam's constructor, so its
  slots are ``<var>/Adam`` and ``get_name()`` is ``Adam``.
* ``extend_with_decoupled_weight_decay`` named its class ``<Base>WithDecoupledWeightDecay``
  (TF1: ``OptimizerWithDecoupledWeightDecay``), and an ``apply_gradients`` without
  ``decay_var_list`` kept the list of an earlier call instead of decaying every variable.
* ``aggregation_method=EXPERIMENTAL_TREE`` / ``EXPERIMENTAL_ACCUMULATE_N`` summed
  contributions with one ``gradients/AddN``; TensorFlow adds them two at a time in the
  scope ``<op>_gradient_sum`` (``gradients/enc/w/read_gradient_sum/AddN_1``).
* Optimizer internals named otherwise than TensorFlow's, which programs read:
  ``FtrlOptimizer`` kept ``_l1_tensor``/``_l2_tensor``/``_l1``... (TF:
  ``_l1_regularization_strength_tensor``, ``_adjusted_l2_regularization_strength_tensor``,
  ``_beta_tensor``, ``_l1_regularization_strength``...) and built an
  ``l2_regularization_strength`` constant where TF folds beta in with
  ``Maximum``/``mul``/``truediv``/``add`` and a ``beta`` constant; the proximal optimizers
  and AdagradDA lacked ``_learning_rate_tensor``, ``_l1_regularization_strength_tensor``,
  ``_initial_accumulator_value``, ``_global_step_on_worker``....
* Graph layout of updates: TensorFlow's base optimizer sums repeated indices first in
  the update's scope (``update_w/Unique``, ``UnsortedSegmentSum``); flowgraph does so for
  every optimizer but ``tf.train``'s own, whose fused sparse kernels sum them (kept on
  purpose: the two ops cost wide & deep 20-30 % of its throughput), so LazyAdam and the
  decoupled decay no longer repeat it themselves; RMSProp's ``rms`` slot
  starts from ``Initializer/ones``, FTRL's ``accum`` from ``Initializer/ones`` times the
  value (``Initializer/mul``), ProximalAdagrad's and AdagradDA's slots from graph-level
  constants (``Const_1``...), and AdagradDA casts L1/L2 in each update
  (``update_w/Cast/x``) instead of making ``l1_regularization_strength`` constants.
* ``tf.contrib.opt.MovingAverageOptimizer`` was missing: added (``train_with_avg`` step,
  averages after the update unless ``sequential_update=False``, ``swapping_saver``
  writing the averages under the variables' names, its ``RuntimeError`` before
  ``minimize`` and ``ValueError`` for a missing swap target).

Left as is: the gradient of ``a * const`` is the ``Mul`` itself (TensorFlow:
``mul_grad/tuple/control_dependency``, it differentiates the constant side too; the
gradients area); sparse SGD and sparse Adam build flowgraph's fused
``SparseApplyGradientDescent`` / ``SparseApplyAdam`` (TensorFlow: ``mul`` + ``ScatterSub``
for SGD, about forty ops for Adam; flowgraph rewrites them on export); two train ops of
one Adam run in the same ``session.run`` update ``beta1_power`` once (TensorFlow: twice,
but the two reads race); the dtype list of the optimizer's "Invalid type" error lacks
``bfloat16``; a schedule given ``global_step=None`` raises TF 1.x's "global_step is
required for exponential_decay." (TF 2.15: "None values not supported."). Values agree
in each case but the racing one.
"""

import os
import re
import shutil
import tempfile

import numpy as np
import pytest
from flowgraph.python.training.moving_averages import assign_moving_average

import flowgraph as tf

copt = tf.contrib.opt

_NUMBER = re.compile(r"-?\d+\.\d*(?:e[-+]?\d+)?|-?\d+e[-+]?\d+|-?\d+")


def _same(got: str, expected: str, atol: float = 2e-5) -> None:
    """The printed lines equal TensorFlow's: text exactly, numbers within `atol` (float32
    sums in another order move the fifth decimal by one)."""
    got_lines, exp_lines = got.rstrip("\n").split("\n"), expected.rstrip("\n").split("\n")
    assert len(got_lines) == len(exp_lines), (got, expected)
    for g, e in zip(got_lines, exp_lines):
        assert _NUMBER.sub("#", g) == _NUMBER.sub("#", e), (g, e)
        gn = [float(x) for x in _NUMBER.findall(g)]
        en = [float(x) for x in _NUMBER.findall(e)]
        np.testing.assert_allclose(gn, en, rtol=1e-5, atol=atol, err_msg=g)


def _program_optimizer_zoo():
    """Every tf.train optimizer with non-default arguments, slots and values."""
    np.random.seed(0)
    X = np.random.randn(16, 3).astype(np.float32)
    Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)

    def build(name, opt_fn):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(1)
            x = tf.placeholder(tf.float32, [None, 3], name="x")
            y = tf.placeholder(tf.float32, [None, 1], name="y")
            with tf.variable_scope("model"):
                w = tf.get_variable(
                    "w", [3, 1], initializer=tf.truncated_normal_initializer(stddev=0.1)
                )
                b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
            gs = tf.train.get_or_create_global_step()
            opt = opt_fn()
            train = opt.minimize(loss, global_step=gs)
            print(name, "train op:", train.name, "slots:", sorted(opt.get_slot_names()))
            print(name, "opt vars:", [v.name for v in opt.variables()])
            print(name, "global vars:", [v.name for v in tf.global_variables()])
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                for _ in range(4):
                    _, lval = s.run([train, loss], {x: X, y: Y})
                print(
                    name,
                    "loss",
                    round(float(lval), 5),
                    "w",
                    np.round(s.run(w).ravel(), 5),
                    "gs",
                    s.run(gs),
                )
                for sn in sorted(opt.get_slot_names()):
                    sl = opt.get_slot(w, sn)
                    print(name, " slot", sn, sl.name, sl.shape, np.round(s.run(sl).ravel(), 5))

    build(
        "adam",
        lambda: tf.train.AdamOptimizer(0.05, beta1=0.8, beta2=0.99, epsilon=1e-4, name="MyAdam"),
    )
    build("adagrad", lambda: tf.train.AdagradOptimizer(0.3, initial_accumulator_value=0.5))
    build("adadelta", lambda: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6))
    build(
        "rms",
        lambda: tf.train.RMSPropOptimizer(
            0.01, decay=0.8, momentum=0.9, epsilon=1e-5, centered=True
        ),
    )
    build("rms2", lambda: tf.train.RMSPropOptimizer(0.01))
    build("nesterov", lambda: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True))
    build(
        "ftrl",
        lambda: tf.train.FtrlOptimizer(
            0.2,
            learning_rate_power=-0.6,
            initial_accumulator_value=0.2,
            l1_regularization_strength=0.01,
            l2_regularization_strength=0.02,
            l2_shrinkage_regularization_strength=0.03,
        ),
    )
    build(
        "ftrl0",
        lambda: tf.train.FtrlOptimizer(
            0.2, learning_rate_power=0.0, l1_regularization_strength=0.01
        ),
    )
    build(
        "proxgd",
        lambda: tf.train.ProximalGradientDescentOptimizer(
            0.1, l1_regularization_strength=0.05, l2_regularization_strength=0.1
        ),
    )
    build(
        "proxada",
        lambda: tf.train.ProximalAdagradOptimizer(
            0.2,
            initial_accumulator_value=0.3,
            l1_regularization_strength=0.05,
            l2_regularization_strength=0.1,
        ),
    )
    build(
        "adagradda",
        lambda: tf.train.AdagradDAOptimizer(
            0.2,
            global_step=tf.train.get_or_create_global_step(),
            initial_gradient_squared_accumulator_value=0.2,
            l1_regularization_strength=0.01,
            l2_regularization_strength=0.02,
        ),
    )


_EXPECTED_OPTIMIZER_ZOO = """\
adam train op: MyAdam slots: ['m', 'v']
adam opt vars: ['beta1_power:0', 'beta2_power:0', 'model/b/MyAdam:0', \
'model/b/MyAdam_1:0', 'model/w/MyAdam:0', 'model/w/MyAdam_1:0']
adam global vars: ['model/w:0', 'model/b:0', 'global_step:0', 'beta1_power:0', \
'beta2_power:0', 'model/w/MyAdam:0', 'model/w/MyAdam_1:0', 'model/b/MyAdam:0', \
'model/b/MyAdam_1:0']
adam loss 5.12912 w [ 0.22905 -0.1427   0.23379] gs 4
adam  slot m model/w/MyAdam:0 (3, 1) [-1.41752  2.66042 -0.21332]
adam  slot v model/w/MyAdam_1:0 (3, 1) [0.23538 0.80988 0.00622]
adagrad train op: Adagrad slots: ['accumulator']
adagrad opt vars: ['model/b/Adagrad:0', 'model/w/Adagrad:0']
adagrad global vars: ['model/w:0', 'model/b:0', 'global_step:0', 'model/w/Adagrad:0', \
'model/b/Adagrad:0']
adagrad loss 2.52509 w [ 0.69257 -0.70796  0.34771] gs 4
adagrad  slot accumulator model/w/Adagrad:0 (3, 1) [14.0256 62.4497  0.83898]
adadelta train op: Adadelta slots: ['accum', 'accum_update']
adadelta opt vars: ['model/b/Adadelta:0', 'model/b/Adadelta_1:0', 'model/w/Adadelta:0', \
'model/w/Adadelta_1:0']
adadelta global vars: ['model/w:0', 'model/b:0', 'global_step:0', 'model/w/Adadelta:0', \
'model/w/Adadelta_1:0', 'model/b/Adadelta:0', 'model/b/Adadelta_1:0']
adadelta loss 6.15287 w [0.04354 0.04368 0.05477] gs 4
adadelta  slot accum model/w/Adadelta:0 (3, 1) [2.36954 7.54683 0.09196]
adadelta  slot accum_update model/w/Adadelta_1:0 (3, 1) [0.0 0.0 0.0]
rms train op: RMSProp slots: ['mg', 'momentum', 'rms']
rms opt vars: ['model/b/RMSProp:0', 'model/b/RMSProp_1:0', 'model/b/RMSProp_2:0', \
'model/w/RMSProp:0', 'model/w/RMSProp_1:0', 'model/w/RMSProp_2:0']
rms global vars: ['model/w:0', 'model/b:0', 'global_step:0', 'model/w/RMSProp:0', \
'model/w/RMSProp_1:0', 'model/w/RMSProp_2:0', 'model/b/RMSProp:0', 'model/b/RMSProp_1:0', \
'model/b/RMSProp_2:0']
rms loss 5.42296 w [ 0.19258 -0.1286   0.09803] gs 4
rms  slot mg model/w/RMSProp_1:0 (3, 1) [-1.47223  2.69032 -0.29769]
rms  slot momentum model/w/RMSProp_2:0 (3, 1) [-0.06033  0.06822 -0.0222 ]
rms  slot rms model/w/RMSProp:0 (3, 1) [ 4.08746 12.675    0.55989]
rms2 train op: RMSProp slots: ['momentum', 'rms']
rms2 opt vars: ['model/b/RMSProp:0', 'model/b/RMSProp_1:0', 'model/w/RMSProp:0', \
'model/w/RMSProp_1:0']
rms2 global vars: ['model/w:0', 'model/b:0', 'global_step:0', 'model/w/RMSProp:0', \
'model/w/RMSProp_1:0', 'model/b/RMSProp:0', 'model/b/RMSProp_1:0']
rms2 loss 5.77773 w [ 0.09974 -0.02481  0.06454] gs 4
rms2  slot momentum model/w/RMSProp_1:0 (3, 1) [-0.01462  0.01611 -0.00585]
rms2  slot rms model/w/RMSProp:0 (3, 1) [2.90072 7.9664  0.74783]
nesterov train op: Momentum slots: ['momentum']
nesterov opt vars: ['model/b/Momentum:0', 'model/w/Momentum:0']
nesterov global vars: ['model/w:0', 'model/b:0', 'global_step:0', 'model/w/Momentum:0', \
'model/b/Momentum:0']
nesterov loss 0.40605 w [ 1.12157 -1.95824  0.33622] gs 4
nesterov  slot momentum model/w/Momentum:0 (3, 1) [-5.09017  9.61743 -1.59838]
ftrl train op: Ftrl slots: ['accum', 'linear']
ftrl opt vars: ['model/b/Ftrl:0', 'model/b/Ftrl_1:0', 'model/w/Ftrl:0', 'model/w/Ftrl_1:0']
ftrl global vars: ['model/w:0', 'model/b:0', 'global_step:0', 'model/w/Ftrl:0', \
'model/w/Ftrl_1:0', 'model/b/Ftrl:0', 'model/b/Ftrl_1:0']
ftrl loss 4.06223 w [ 0.41894 -0.31794  0.30276] gs 4
ftrl  slot accum model/w/Ftrl:0 (3, 1) [18.9049  74.9077   0.58149]
ftrl  slot linear model/w/Ftrl_1:0 (3, 1) [-12.2465  21.2078  -1.11553]
ftrl0 train op: Ftrl slots: ['accum', 'linear']
ftrl0 opt vars: ['model/b/Ftrl:0', 'model/b/Ftrl_1:0', 'model/w/Ftrl:0', 'model/w/Ftrl_1:0']
ftrl0 global vars: ['model/w:0', 'model/b:0', 'global_step:0', 'model/w/Ftrl:0', \
'model/w/Ftrl_1:0', 'model/b/Ftrl:0', 'model/b/Ftrl_1:0']
ftrl0 loss 0.18307 w [ 0.98448 -1.79438  0.36681] gs 4
ftrl0  slot accum model/w/Ftrl:0 (3, 1) [ 9.4378  29.6488  0.99312]
ftrl0  slot linear model/w/Ftrl_1:0 (3, 1) [-4.93241  8.98191 -1.84406]
proxgd train op: ProximalGradientDescent slots: []
proxgd opt vars: []
proxgd global vars: ['model/w:0', 'model/b:0', 'global_step:0']
proxgd loss 1.38639 w [ 0.71338 -1.21495  0.21315] gs 4
proxada train op: ProximalAdagrad slots: ['accumulator']
proxada opt vars: ['model/b/ProximalAdagrad:0', 'model/w/ProximalAdagrad:0']
proxada global vars: ['model/w:0', 'model/b:0', 'global_step:0', \
'model/w/ProximalAdagrad:0', 'model/b/ProximalAdagrad:0']
proxada loss 3.50296 w [ 0.49811 -0.46102  0.27662] gs 4
proxada  slot accumulator model/w/ProximalAdagrad:0 (3, 1) [17.4518  70.2265  0.75302]
adagradda train op: AdagradDA slots: ['gradient_accumulator', \
'gradient_squared_accumulator']
adagradda opt vars: ['model/b/AdagradDA:0', 'model/b/AdagradDA_1:0', \
'model/w/AdagradDA:0', 'model/w/AdagradDA_1:0']
adagradda global vars: ['model/w:0', 'model/b:0', 'global_step:0', 'model/w/AdagradDA:0', \
'model/w/AdagradDA_1:0', 'model/b/AdagradDA:0', 'model/b/AdagradDA_1:0']
adagradda loss 3.76768 w [ 0.39061 -0.39634  0.28867] gs 4
adagradda  slot gradient_accumulator model/w/AdagradDA:0 (3, 1) [-8.63882 16.5442 -1.24468]
adagradda  slot gradient_squared_accumulator model/w/AdagradDA_1:0 (3, 1) [19.2433 \
69.0932   0.67019]
"""


def test_program_optimizer_zoo(capsys):
    _program_optimizer_zoo()
    _same(capsys.readouterr().out, _EXPECTED_OPTIMIZER_ZOO)


def _program_lr_schedules():
    """Each learning-rate schedule driving SGD: op name, dtype, the rate per step."""

    # learning-rate schedules driving an optimizer
    def sched(name, fn, steps=7, int64=False):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(3)
            gs = tf.Variable(
                0, trainable=False, name="global_step", dtype=tf.int64 if int64 else tf.int32
            )
            lr = fn(gs)
            w = tf.Variable([1.0, -2.0], name="w")
            loss = tf.reduce_sum(tf.square(w))
            train = tf.train.GradientDescentOptimizer(lr).minimize(loss, global_step=gs)
            print(name, lr.name, lr.dtype.name, lr.shape)
            vals = []
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                for _ in range(steps):
                    vals.append(round(float(s.run(lr)), 6))
                    s.run(train)
                print(name, vals, np.round(s.run(w), 5))

    sched("exp", lambda gs: tf.train.exponential_decay(0.1, gs, 2, 0.5, staircase=True))
    sched("exp_nostair", lambda gs: tf.train.exponential_decay(0.1, gs, 3, 0.7))
    sched(
        "pw",
        lambda gs: tf.train.piecewise_constant(gs, [np.int64(2), np.int64(4)], [0.1, 0.05, 0.01]),
        int64=True,
    )
    sched("pw32", lambda gs: tf.train.piecewise_constant(gs, [2, 5], [0.1, 0.05, 0.01]))
    sched(
        "poly_cycle",
        lambda gs: tf.train.polynomial_decay(
            0.1, gs, 3, end_learning_rate=0.01, power=2.0, cycle=True
        ),
    )
    sched(
        "poly", lambda gs: tf.train.polynomial_decay(0.1, gs, 3, end_learning_rate=0.01, power=0.5)
    )
    sched("cos", lambda gs: tf.train.cosine_decay(0.1, gs, 5, alpha=0.1))
    sched(
        "cosr",
        lambda gs: tf.train.cosine_decay_restarts(0.1, gs, 2, t_mul=2.0, m_mul=0.5, alpha=0.05),
    )
    sched(
        "lincos",
        lambda gs: tf.train.linear_cosine_decay(0.1, gs, 6, num_periods=1.0, alpha=0.1, beta=0.01),
    )
    sched(
        "noisy",
        lambda gs: tf.train.noisy_linear_cosine_decay(
            0.1,
            gs,
            6,
            initial_variance=1.0,
            variance_decay=0.55,
            num_periods=0.5,
            alpha=0.0,
            beta=0.001,
        ),
    )
    sched("inv", lambda gs: tf.train.inverse_time_decay(0.1, gs, 2, 0.5, staircase=True))
    sched("inv2", lambda gs: tf.train.inverse_time_decay(0.1, gs, 2, 0.5))
    sched("nat", lambda gs: tf.train.natural_exp_decay(0.1, gs, 2, 0.5, staircase=True))
    sched("nat2", lambda gs: tf.train.natural_exp_decay(0.1, gs, 3, 0.2))
    sched("warm", lambda gs: tf.minimum(0.1, 0.1 * tf.cast(gs + 1, tf.float32) / 3.0))


_EXPECTED_LR_SCHEDULES = """\
exp ExponentialDecay:0 float32 ()
exp [0.1, 0.1, 0.05, 0.05, 0.025, 0.025, 0.0125] [ 0.45616 -0.91232]
exp_nostair ExponentialDecay:0 float32 ()
exp_nostair [0.1, 0.08879, 0.078837, 0.07, 0.062153, 0.055186, 0.049] [ 0.33491 -0.66982]
pw PiecewiseConstant/case/cond/Merge:0 float32 ()
pw [0.1, 0.1, 0.1, 0.05, 0.05, 0.01, 0.01] [ 0.3983  -0.79659]
pw32 PiecewiseConstant/case/cond/Merge:0 float32 ()
pw32 [0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.01] [ 0.36578 -0.73157]
poly_cycle PolynomialDecay:0 float32 ()
poly_cycle [0.1, 0.05, 0.02, 0.01, 0.02, 0.0125, 0.01] [ 0.62134 -1.24269]
poly PolynomialDecay:0 float32 ()
poly [0.1, 0.083485, 0.061962, 0.01, 0.01, 0.01, 0.01] [ 0.53851 -1.07703]
cos CosineDecay/Mul_3:0 float32 ()
cos [0.1, 0.091406, 0.068906, 0.041094, 0.018594, 0.01, 0.01] [ 0.47837 -0.95673]
cosr SGDRDecay:0 float32 ()
cosr [0.1, 0.0525, 0.0525, 0.045544, 0.02875, 0.011956, 0.02875] [ 0.50502 -1.01004]
lincos LinearCosineDecay:0 float32 ()
lincos [0.111, 0.071, 0.020167, 0.001, 0.011833, 0.021, 0.011] [ 0.58482 -1.16963]
noisy NoisyLinearCosineDecay:0 float32 ()
noisy [-0.086372, 0.04606, 0.035437, -0.023928, 0.028267, 0.008072, 0.0001] [ 0.63166 \
-1.26333]
inv InverseTimeDecay:0 float32 ()
inv [0.1, 0.1, 0.066667, 0.066667, 0.05, 0.05, 0.04] [ 0.35823 -0.71645]
inv2 InverseTimeDecay:0 float32 ()
inv2 [0.1, 0.08, 0.066667, 0.057143, 0.05, 0.044444, 0.04] [ 0.38915 -0.7783 ]
nat ExponentialDecay:0 float32 ()
nat [0.1, 0.1, 0.060653, 0.060653, 0.036788, 0.036788, 0.022313] [ 0.40518 -0.81036]
nat2 ExponentialDecay:0 float32 ()
nat2 [0.1, 0.093551, 0.087517, 0.081873, 0.076593, 0.071653, 0.067032] [ 0.28184 -0.56368]
warm Minimum:0 float32 ()
warm [0.033333, 0.066667, 0.1, 0.1, 0.1, 0.1, 0.1] [ 0.26506 -0.53011]
"""


def test_program_lr_schedules(capsys):
    _program_lr_schedules()
    _same(capsys.readouterr().out, _EXPECTED_LR_SCHEDULES)


def _program_sparse_embedding_updates():
    """Repeated ids through embedding_lookup/gather under every optimizer."""
    # sparse updates on an embedding with duplicate ids, several optimizers
    ids_np = np.array([[0, 2, 2], [3, 0, 0]], np.int32)

    def run(name, opt_fn, use_gather=False, clip=None):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(7)
            ids = tf.placeholder(tf.int32, [None, 3], name="ids")
            with tf.variable_scope("emb"):
                table = tf.get_variable(
                    "table", [5, 2], initializer=tf.random_uniform_initializer(-1, 1)
                )
            if use_gather:
                rows = tf.gather(table, ids)
            else:
                rows = tf.nn.embedding_lookup(table, ids)
            pooled = tf.reduce_sum(rows, axis=1)
            loss = tf.reduce_mean(tf.square(pooled - 1.0))
            opt = opt_fn()
            gv = opt.compute_gradients(loss)
            grad = gv[0][0]
            print(
                name,
                type(grad).__name__,
                grad.indices.name,
                grad.values.shape,
                grad.dense_shape.name if grad.dense_shape is not None else None,
            )
            if clip is not None:
                clipped = tf.clip_by_norm(grad, clip)
                print(
                    name,
                    "clipped",
                    type(clipped).__name__,
                    clipped.values.name,
                    clipped.values.shape,
                )
                gv = [(clipped, gv[0][1])]
            train = opt.apply_gradients(gv)
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                print(name, "init", np.round(s.run(table), 5).tolist())
                for _ in range(3):
                    s.run(train, {ids: ids_np})
                print(name, "table", np.round(s.run(table), 5).tolist())
                for sn in opt.get_slot_names():
                    print(name, sn, np.round(s.run(opt.get_slot(table, sn)), 5).tolist())

    run("sgd", lambda: tf.train.GradientDescentOptimizer(0.1))
    run("sgd_gather", lambda: tf.train.GradientDescentOptimizer(0.1), use_gather=True)
    run("sgd_clip", lambda: tf.train.GradientDescentOptimizer(0.1), clip=0.5)
    run("adam", lambda: tf.train.AdamOptimizer(0.1, epsilon=1e-3))
    run("adagrad", lambda: tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.2))
    run("mom", lambda: tf.train.MomentumOptimizer(0.1, 0.8, use_nesterov=True))
    run("rms", lambda: tf.train.RMSPropOptimizer(0.05, decay=0.8, momentum=0.5, centered=True))
    run(
        "ftrl",
        lambda: tf.train.FtrlOptimizer(
            0.3,
            l1_regularization_strength=0.01,
            l2_regularization_strength=0.01,
            l2_shrinkage_regularization_strength=0.02,
        ),
    )
    run("adadelta", lambda: tf.train.AdadeltaOptimizer(0.5, rho=0.8))
    run("proxada", lambda: tf.train.ProximalAdagradOptimizer(0.1, l1_regularization_strength=0.01))
    run(
        "proxgd",
        lambda: tf.train.ProximalGradientDescentOptimizer(
            0.1, l1_regularization_strength=0.01, l2_regularization_strength=0.05
        ),
    )
    run(
        "ada_da",
        lambda: tf.train.AdagradDAOptimizer(
            0.1, tf.train.get_or_create_global_step(), l1_regularization_strength=0.01
        ),
    )


_EXPECTED_SPARSE_EMBEDDING_UPDATES = """\
sgd IndexedSlices gradients/embedding_lookup_grad/Reshape_1:0 (?, 2) \
gradients/embedding_lookup_grad/Cast:0
sgd init [[0.50746, -0.84412], [-0.08238, 0.71365], [-0.27255, -0.62915], [0.92184, \
-0.15731], [-0.77907, -0.34401]]
sgd table [[0.39616, 0.06389], [-0.08238, 0.71365], [-0.00814, 0.02025], [0.80009, \
0.13435], [-0.77907, -0.34401]]
sgd_gather IndexedSlices gradients/GatherV2_grad/Reshape_1:0 (?, 2) \
gradients/GatherV2_grad/Cast:0
sgd_gather init [[0.50746, -0.84412], [-0.08238, 0.71365], [-0.27255, -0.62915], \
[0.92184, -0.15731], [-0.77907, -0.34401]]
sgd_gather table [[0.39616, 0.06389], [-0.08238, 0.71365], [-0.00814, 0.02025], [0.80009, \
0.13435], [-0.77907, -0.34401]]
sgd_clip IndexedSlices gradients/embedding_lookup_grad/Reshape_1:0 (?, 2) \
gradients/embedding_lookup_grad/Cast:0
sgd_clip clipped IndexedSlices clip_by_norm:0 (?, 2)
sgd_clip init [[0.50746, -0.84412], [-0.08238, 0.71365], [-0.27255, -0.62915], [0.92184, \
-0.15731], [-0.77907, -0.34401]]
sgd_clip table [[0.49065, -0.67301], [-0.08238, 0.71365], [-0.23107, -0.50821], [0.90307, \
-0.10198], [-0.77907, -0.34401]]
adam IndexedSlices gradients/embedding_lookup_grad/Reshape_1:0 (?, 2) \
gradients/embedding_lookup_grad/Cast:0
adam init [[0.50746, -0.84412], [-0.08238, 0.71365], [-0.27255, -0.62915], [0.92184, \
-0.15731], [-0.77907, -0.34401]]
adam table [[0.26514, -0.54744], [-0.08238, 0.71365], [0.01881, -0.33303], [0.64815, \
0.13582], [-0.77907, -0.34401]]
adam m [[0.04878, -1.06252], [0.0, 0.0], [-0.25109, -0.7546], [0.08716, -0.34261], [0.0, \
0.0]]
adam v [[0.00021, 0.04719], [0.0, 0.0], [0.00264, 0.02376], [0.00037, 0.00491], [0.0, 0.0]]
adagrad IndexedSlices gradients/embedding_lookup_grad/Reshape_1:0 (?, 2) \
gradients/embedding_lookup_grad/Cast:0
adagrad init [[0.50746, -0.84412], [-0.08238, 0.71365], [-0.27255, -0.62915], [0.92184, \
-0.15731], [-0.77907, -0.34401]]
adagrad table [[0.37305, -0.62549], [-0.08238, 0.71365], [-0.06776, -0.41083], [0.76313, \
0.0545], [-0.77907, -0.34401]]
adagrad accumulator [[0.47863, 48.5244], [0.2, 0.2], [2.82567, 24.4785], [0.64152, \
5.2354], [0.2, 0.2]]
mom IndexedSlices gradients/embedding_lookup_grad/Reshape_1:0 (?, 2) \
gradients/embedding_lookup_grad/Cast:0
mom init [[0.50746, -0.84412], [-0.08238, 0.71365], [-0.27255, -0.62915], [0.92184, \
-0.15731], [-0.77907, -0.34401]]
mom table [[0.26299, 0.77011], [-0.08238, 0.71365], [0.291, 0.54153], [0.65872, 0.35714], \
[-0.77907, -0.34401]]
mom momentum [[0.75559, -3.68027], [0.0, 0.0], [-1.68245, -2.73793], [0.79841, -1.15566], \
[0.0, 0.0]]
rms IndexedSlices gradients/embedding_lookup_grad/Reshape_1:0 (?, 2) \
gradients/embedding_lookup_grad/Cast:0
rms init [[0.50746, -0.84412], [-0.08238, 0.71365], [-0.27255, -0.62915], [0.92184, \
-0.15731], [-0.77907, -0.34401]]
rms table [[0.40907, -0.43014], [-0.08238, 0.71365], [-0.05467, -0.24579], [0.81249, \
0.11029], [-0.77907, -0.34401]]
rms mg [[0.18322, -1.86441], [0.0, 0.0], [-0.45272, -1.31664], [0.20479, -0.60305], [0.0, \
0.0]]
rms momentum [[0.04039, -0.155], [0.0, 0.0], [-0.08766, -0.14518], [0.0448, -0.1048], \
[0.0, 0.0]]
rms rms [[0.58132, 7.72476], [1.0, 1.0], [0.93536, 4.10846], [0.59862, 1.26668], [1.0, 1.0]]
ftrl IndexedSlices gradients/embedding_lookup_grad/Reshape_1:0 (?, 2) \
gradients/embedding_lookup_grad/Cast:0
ftrl init [[0.50746, -0.84412], [-0.08238, 0.71365], [-0.27255, -0.62915], [0.92184, \
-0.15731], [-0.77907, -0.34401]]
ftrl table [[0.29371, -0.20775], [-0.08238, 0.71365], [0.32076, 0.01229], [0.35863, \
0.42878], [-0.77907, -0.34401]]
ftrl accum [[2.2918, 31.5542], [0.1, 0.1], [1.9546, 16.06], [0.55915, 3.36015], [0.1, 0.1]]
ftrl linear [[-1.49801, 3.90409], [0.0, 0.0], [-1.51125, -0.17437], [-0.91108, -2.63855], \
[0.0, 0.0]]
adadelta IndexedSlices gradients/embedding_lookup_grad/Reshape_1:0 (?, 2) \
gradients/embedding_lookup_grad/Cast:0
adadelta init [[0.50746, -0.84412], [-0.08238, 0.71365], [-0.27255, -0.62915], [0.92184, \
-0.15731], [-0.77907, -0.34401]]
adadelta table [[0.50711, -0.84377], [-0.08238, 0.71365], [-0.27219, -0.62879], [0.92149, \
-0.15696], [-0.77907, -0.34401]]
adadelta accum [[0.08511, 9.43127], [0.0, 0.0], [0.52529, 4.69581], [0.10697, 0.98759], \
[0.0, 0.0]]
adadelta accum_update [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]
proxada IndexedSlices gradients/embedding_lookup_grad/Reshape_1:0 (?, 2) \
gradients/embedding_lookup_grad/Cast:0
proxada init [[0.50746, -0.84412], [-0.08238, 0.71365], [-0.27255, -0.62915], [0.92184, \
-0.15731], [-0.77907, -0.34401]]
proxada table [[0.35984, -0.62463], [-0.08238, 0.71365], [-0.05916, -0.40933], [0.74372, \
0.0577], [-0.77907, -0.34401]]
proxada accumulator [[0.34373, 48.3402], [0.1, 0.1], [2.7336, 24.3501], [0.51434, \
5.12507], [0.1, 0.1]]
proxgd IndexedSlices gradients/embedding_lookup_grad/Reshape_1:0 (?, 2) \
gradients/embedding_lookup_grad/Cast:0
proxgd init [[0.50746, -0.84412], [-0.08238, 0.71365], [-0.27255, -0.62915], [0.92184, \
-0.15731], [-0.77907, -0.34401]]
proxgd table [[0.38994, 0.06491], [-0.08238, 0.71365], [-0.00404, 0.02145], [0.7863, \
0.13172], [-0.77907, -0.34401]]
ada_da IndexedSlices gradients/embedding_lookup_grad/Reshape_1:0 (?, 2) \
gradients/embedding_lookup_grad/Cast:0
ada_da init [[0.50746, -0.84412], [-0.08238, 0.71365], [-0.27255, -0.62915], [0.92184, \
-0.15731], [-0.77907, -0.34401]]
ada_da table [[0.11459, 0.13823], [-0.08238, 0.71365], [0.16614, 0.13609], [0.0598, \
0.13603], [-0.77907, -0.34401]]
ada_da gradient_accumulator [[-2.43176, -6.41532], [0.0, 0.0], [-2.58153, -4.4471], \
[-0.57049, -2.09589], [0.0, 0.0]]
ada_da gradient_squared_accumulator [[4.46624, 21.473], [0.1, 0.1], [2.39561, 10.6308], \
[0.87859, 2.35132], [0.1, 0.1]]
"""


def test_program_sparse_embedding_updates(capsys):
    _program_sparse_embedding_updates()
    _same(capsys.readouterr().out, _EXPECTED_SPARSE_EMBEDDING_UPDATES)


def _program_accumulate_clip_ema():
    """Gradient accumulation, global-norm clipping and moving averages."""
    np.random.seed(3)
    X = np.random.randn(12, 4).astype(np.float32)
    Y = np.random.randn(12, 1).astype(np.float32)
    tf.set_random_seed(11)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    with tf.variable_scope("net"):
        h = tf.layers.dense(x, 5, activation=tf.nn.tanh, name="h")
        out = tf.layers.dense(h, 1, name="out")
    loss = tf.losses.mean_squared_error(y, out)
    tvars = tf.trainable_variables()
    print([v.name for v in tvars])
    global_step = tf.train.get_or_create_global_step()
    opt = tf.train.MomentumOptimizer(0.1, 0.9)
    grads = tf.gradients(
        loss,
        tvars,
        gate_gradients=True,
        aggregation_method=tf.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N,
    )
    clipped, gnorm = tf.clip_by_global_norm(grads, 0.5)
    print("clip names", [c.name for c in clipped][:2], gnorm.name)
    avg_clip = tf.clip_by_average_norm(grads[0], 0.1)
    print("avgclip", avg_clip.name, avg_clip.shape)
    # gradient accumulation over mini-batches
    accum = [
        tf.Variable(
            tf.zeros_like(v.initialized_value()),
            trainable=False,
            name=v.op.name.replace("/", "_") + "_acc",
        )
        for v in tvars
    ]
    zero_ops = [a.assign(tf.zeros_like(a)) for a in accum]
    accum_ops = [a.assign_add(g) for a, g in zip(accum, clipped)]
    n_mb = tf.constant(3.0)
    apply_op = opt.apply_gradients(
        [(a / n_mb, v) for a, v in zip(accum, tvars)], global_step=global_step
    )
    ema = tf.train.ExponentialMovingAverage(
        0.9, num_updates=global_step, zero_debias=False, name="EMA"
    )
    with tf.control_dependencies([apply_op]):
        train_op = ema.apply(tvars)
    print("ema", [ema.average_name(v) for v in tvars][:2], ema.average(tvars[0]).name)
    print("mav", [v.name for v in tf.moving_average_variables()][:2])
    print("restore", sorted(ema.variables_to_restore().keys())[:6])
    print(
        "restore2", sorted((k, v.name) for k, v in ema.variables_to_restore([tvars[0]]).items())[:6]
    )
    tf.summary.scalar("gnorm", gnorm)
    merged = tf.summary.merge_all()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for step in range(3):
            s.run(zero_ops)
            gn = []
            for mb in range(3):
                sl = slice(mb * 4, mb * 4 + 4)
                gn.append(round(float(s.run([accum_ops, gnorm], {x: X[sl], y: Y[sl]})[1]), 5))
            s.run(train_op)
            print(
                "step",
                step,
                gn,
                "gs",
                s.run(global_step),
                "loss",
                round(float(s.run(loss, {x: X, y: Y})), 5),
            )
        print("kernel", np.round(s.run(tvars[0]), 4).tolist())
        print("avg", np.round(s.run(ema.average(tvars[0])), 4).tolist())
        print("avgb", np.round(s.run(ema.average(tvars[1])), 5).tolist())
        print("acc", np.round(s.run(accum[3]), 5).tolist())
        print("clipavg", np.round(s.run(avg_clip, {x: X, y: Y}), 5).tolist())
        print(len(s.run(merged, {x: X, y: Y})) > 0)
    # zero_debias on a tensor
    g2 = tf.Graph()
    with g2.as_default():
        val = tf.placeholder(tf.float32, [2], name="val")
        ema2 = tf.train.ExponentialMovingAverage(0.8, zero_debias=True)
        up = ema2.apply([val])
        print("zd", ema2.average(val).name, [v.name for v in tf.global_variables()])
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for i in range(3):
                s.run(up, {val: np.array([1.0 + i, -2.0], np.float32)})
                print("zd", np.round(s.run(ema2.average(val)), 5).tolist())
        mav = assign_moving_average
        v3 = tf.Variable([0.0, 0.0], name="v3")
        up3 = mav(v3, tf.constant([1.0, 2.0]), 0.5, zero_debias=True)
        print("amav", up3.name, [v.name for v in tf.global_variables()])
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            print([np.round(s.run(up3), 4).tolist() for _ in range(2)])


_EXPECTED_ACCUMULATE_CLIP_EMA = """\
['net/h/kernel:0', 'net/h/bias:0', 'net/out/kernel:0', 'net/out/bias:0']
clip names ['clip_by_global_norm/clip_by_global_norm/_0:0', \
'clip_by_global_norm/clip_by_global_norm/_1:0'] global_norm/global_norm:0
avgclip clip_by_average_norm:0 (4, 5)
ema ['net/h/kernel/EMA', 'net/h/bias/EMA'] net/h/kernel/EMA:0
mav ['net/h/kernel:0', 'net/h/bias:0']
restore ['global_step', 'net/h/bias/EMA', 'net/h/bias/Momentum', 'net/h/kernel/EMA', \
'net/h/kernel/Momentum', 'net/out/bias/EMA']
restore2 [('global_step', 'global_step:0'), ('net/h/bias', 'net/h/bias:0'), \
('net/h/bias/EMA', 'net/h/bias/EMA:0'), ('net/h/bias/Momentum', 'net/h/bias/Momentum:0'), \
('net/h/kernel/EMA', 'net/h/kernel:0'), ('net/h/kernel/Momentum', \
'net/h/kernel/Momentum:0')]
step 0 [2.31336, 2.5766, 3.14993] gs 1 loss 1.81441
step 1 [2.30585, 2.59434, 3.09583] gs 2 loss 1.79301
step 2 [2.2923, 2.63193, 2.99677] gs 3 loss 1.76625
kernel [[0.4495, 0.6298, -0.6477, -0.1708, 0.0846], [-0.7762, -0.7921, 0.0122, -0.606, \
0.0342], [-0.1413, 0.2141, 0.64, 0.7012, 0.0767], [0.5981, -0.5497, -0.2965, -0.4548, \
0.205]]
avg [[0.4498, 0.6336, -0.6481, -0.1716, 0.0842], [-0.7766, -0.7882, 0.0108, -0.6072, \
0.033], [-0.1411, 0.2123, 0.6405, 0.7023, 0.0785], [0.5986, -0.5505, -0.2953, -0.4545, \
0.2057]]
avgb [-0.00777, 0.00292, -0.0088, -0.02886, -0.00879]
acc [0.18957]
clipavg [[0.00766, 0.19233, -0.0266, -0.06161, -0.03493], [-0.02511, 0.18995, -0.06634, \
-0.05304, -0.05718], [0.00436, -0.0678, 0.01853, 0.02947, 0.07752], [0.04108, -0.05641, \
0.0771, 0.03572, 0.06545]]
True
zd val/ExponentialMovingAverage:0 ['val/ExponentialMovingAverage:0', \
'val/ExponentialMovingAverage/biased:0', 'val/ExponentialMovingAverage/local_step:0']
zd [1.0, -2.0]
zd [1.55556, -2.0]
zd [2.14754, -2.0]
amav AssignMovingAvg:0 ['val/ExponentialMovingAverage:0', \
'val/ExponentialMovingAverage/biased:0', 'val/ExponentialMovingAverage/local_step:0', \
'v3:0', 'v3/biased:0', 'v3/local_step:0']
[[1.0, 2.0], [1.0, 2.0]]
"""


def test_program_accumulate_clip_ema(capsys):
    _program_accumulate_clip_ema()
    _same(capsys.readouterr().out, _EXPECTED_ACCUMULATE_CLIP_EMA)


def _program_adam_checkpoint_resume():
    """Adam with a decayed rate saved and resumed in a fresh graph."""
    d = tempfile.mkdtemp()
    np.random.seed(5)
    X = np.random.randn(8, 3).astype(np.float32)
    Y = np.random.randn(8, 2).astype(np.float32)

    def model(lr_value=0.01):
        tf.set_random_seed(2)
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 2], name="y")
        with tf.variable_scope("dense"):
            w = tf.get_variable("w", [3, 2], initializer=tf.glorot_uniform_initializer())
            b = tf.get_variable("b", [2], initializer=tf.constant_initializer(0.1))
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        gs = tf.train.get_or_create_global_step()
        lr = tf.train.exponential_decay(lr_value, gs, 2, 0.9, staircase=True, name="lr")
        opt = tf.train.AdamOptimizer(lr, beta1=0.85, epsilon=1e-6)
        train = opt.minimize(loss, global_step=gs, name="train_step")
        return x, y, w, b, loss, gs, opt, train

    g = tf.Graph()
    with g.as_default():
        x, y, w, b, _, gs, opt, train = model()
        print("train", train.name, train.type)
        print(
            "lr_t",
            isinstance(opt._lr_t, tf.Tensor),
            opt._lr_t.name,
            opt._beta1_t.name if hasattr(opt._beta1_t, "name") else opt._beta1_t,
        )
        print("lr attrs", opt._lr, opt._beta1, opt._beta2, opt._epsilon)
        print("powers", [v.name for v in opt._get_beta_accumulators()])
        print("vars", [v.name for v in opt.variables()])
        print("slot none", opt.get_slot(w, "nope"))
        saver = tf.train.Saver(max_to_keep=2)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for _ in range(3):
                s.run(train, {x: X, y: Y})
            p = saver.save(s, os.path.join(d, "model.ckpt"), global_step=gs)
            print("saved", os.path.basename(p))
            print("w", np.round(s.run(w), 5).tolist())
            print("m", np.round(s.run(opt.get_slot(w, "m")), 5).tolist())
            for _ in range(2):
                s.run(train, {x: X, y: Y})
            ref = s.run(w)
    print(sorted(n for n, _ in tf.train.list_variables(d)))
    print(sorted(os.listdir(d)))
    r = tf.train.NewCheckpointReader(tf.train.latest_checkpoint(d))
    print(
        "b1p", r.get_tensor("beta1_power"), r.get_tensor("beta2_power"), r.get_tensor("global_step")
    )
    g2 = tf.Graph()
    with g2.as_default():
        x, y, w, b, _, gs, opt, train = model()
        saver = tf.train.Saver()
        with tf.Session() as s:
            saver.restore(s, tf.train.latest_checkpoint(d))
            print("restored gs", s.run(gs), "v", np.round(s.run(opt.get_slot(b, "v")), 6).tolist())
            for _ in range(2):
                s.run(train, {x: X, y: Y})
            print(
                "resumed equal",
                np.allclose(s.run(w), ref, atol=1e-6),
                np.round(s.run(w), 5).tolist(),
            )
    # restore only model vars into a graph with a different optimizer
    g3 = tf.Graph()
    with g3.as_default():
        tf.set_random_seed(2)
        xx = tf.placeholder(tf.float32, [None, 3])
        with tf.variable_scope("dense"):
            w = tf.get_variable("w", [3, 2])
            b = tf.get_variable("b", [2])
        opt = tf.train.RMSPropOptimizer(0.01)
        train = opt.minimize(tf.reduce_sum(tf.matmul(xx, w) + b))
        saver = tf.train.Saver(var_list=[w, b])
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            saver.restore(s, tf.train.latest_checkpoint(d))
            print("partial", np.round(s.run(b), 5).tolist())
            try:
                tf.train.Saver().restore(s, tf.train.latest_checkpoint(d))
            except Exception as e:
                print("err", type(e).__name__, "RMSProp" in str(e))
    shutil.rmtree(d)


_EXPECTED_ADAM_CHECKPOINT_RESUME = """\
train train_step AssignAdd
lr_t True lr:0 train_step/beta1:0
lr attrs Tensor("lr:0", shape=(), dtype=float32) 0.85 0.999 1e-06
powers ['beta1_power:0', 'beta2_power:0']
vars ['beta1_power:0', 'beta2_power:0', 'dense/b/Adam:0', 'dense/b/Adam_1:0', \
'dense/w/Adam:0', 'dense/w/Adam_1:0']
slot none None
saved model.ckpt-3
w [[0.69198, 0.2064], [-0.71874, 0.12329], [0.59668, -0.50439]]
m [[0.21086, 0.11686], [-0.12291, -0.00565], [0.42842, -0.36054]]
['beta1_power', 'beta2_power', 'dense/b', 'dense/b/Adam', 'dense/b/Adam_1', 'dense/w', \
'dense/w/Adam', 'dense/w/Adam_1', 'global_step']
['checkpoint', 'model.ckpt-3.0data-00000-of-00001', 'model.ckpt-3.0index', \
'model.ckpt-3.0meta']
b1p 0.522006 0.996006 3
restored gs 3 v [0.000215, 0.000864]
resumed equal True [[0.675, 0.18946], [-0.70171, 0.13552], [0.57966, -0.4874]]
partial [0.12893, 0.12895]
err NotFoundError True
"""


def test_program_adam_checkpoint_resume(capsys):
    _program_adam_checkpoint_resume()
    _same(capsys.readouterr().out, _EXPECTED_ADAM_CHECKPOINT_RESUME)


def _program_contrib_weight_decay_lazy_adam():
    """The contrib.opt AdamW/MomentumW/LazyAdam/extend_with_decoupled_weight_decay on embeddings."""
    ids_np = np.array([[1, 3, 3], [0, 1, 4]], np.int32)
    y_np = np.array([[1.0], [0.0]], np.float32)

    def run(name, make, steps=3, decay_list=False):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(4)
            ids = tf.placeholder(tf.int32, [None, 3])
            yy = tf.placeholder(tf.float32, [None, 1])
            emb = tf.get_variable(
                "emb", [6, 3], initializer=tf.random_normal_initializer(stddev=0.5)
            )
            dense = tf.get_variable(
                "dense", [3, 1], initializer=tf.random_normal_initializer(stddev=0.5)
            )
            h = tf.reduce_mean(tf.nn.embedding_lookup(emb, ids), axis=1)
            logits = tf.matmul(h, dense)
            loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=yy, logits=logits))
            gs = tf.train.get_or_create_global_step()
            opt = make()
            if decay_list:
                train = opt.minimize(loss, global_step=gs, decay_var_list=[dense])
            else:
                train = opt.minimize(loss, global_step=gs)
            print(
                name, type(opt).__name__, opt.get_name(), train.name, sorted(opt.get_slot_names())
            )
            print(name, [v.name for v in tf.global_variables()])
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                for _ in range(steps):
                    lval, _ = s.run([loss, train], {ids: ids_np, yy: y_np})
                print(name, "loss", round(float(lval), 5))
                print(name, "emb", np.round(s.run(emb), 5).tolist())
                print(name, "dense", np.round(s.run(dense), 5).ravel().tolist())
                for sn in sorted(opt.get_slot_names()):
                    print(name, sn, np.round(s.run(opt.get_slot(emb, sn)), 5).tolist())
        return g

    run("adamw", lambda: copt.AdamWOptimizer(0.01, learning_rate=0.05, beta1=0.8))
    run("adamw_list", lambda: copt.AdamWOptimizer(0.1, learning_rate=0.05), decay_list=True)
    run("momw", lambda: copt.MomentumWOptimizer(0.05, 0.1, 0.9, use_nesterov=True))
    run("lazy", lambda: copt.LazyAdamOptimizer(0.05, beta2=0.99, epsilon=1e-4))
    SGDW = copt.extend_with_decoupled_weight_decay(tf.train.GradientDescentOptimizer)
    run("sgdw", lambda: SGDW(weight_decay=0.02, learning_rate=0.5))
    AdagradW = copt.extend_with_decoupled_weight_decay(tf.train.AdagradOptimizer)
    try:
        AdagradW(0.02, 0.5, initial_accumulator_value=0.3)
    except TypeError:
        print("TypeError")
    run("adagradw", lambda: AdagradW(0.02, learning_rate=0.5, initial_accumulator_value=0.3))
    print(SGDW.__name__)


_EXPECTED_CONTRIB_WEIGHT_DECAY_LAZY_ADAM = """\
adamw AdamWOptimizer AdamW AdamW ['m', 'v']
adamw ['emb:0', 'dense:0', 'global_step:0', 'beta1_power:0', 'beta2_power:0', \
'emb/AdamW:0', 'emb/AdamW_1:0', 'dense/AdamW:0', 'dense/AdamW_1:0']
adamw loss 0.67591
adamw emb [[-0.1561, 0.46942, -0.50641], [0.21251, -0.53078, -0.0962], [-0.0609, -0.363, \
-0.39857], [-0.11193, -0.05331, 0.12059], [-0.2513, 0.31492, 0.72195], [0.69864, 0.33059, \
-0.53903]]
adamw dense [0.12757, -0.43384, -0.2258]
adamw m [[0.00822, -0.01395, -0.01269], [-0.0002, 0.00026, 0.0003], [0.0, 0.0, 0.0], \
[-0.01685, 0.02844, 0.02598], [0.00822, -0.01395, -0.01269], [0.0, 0.0, 0.0]]
adamw v [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1e-05, 1e-05], [0.0, \
0.0, 0.0], [0.0, 0.0, 0.0]]
adamw_list AdamWOptimizer AdamW AdamW ['m', 'v']
adamw_list ['emb:0', 'dense:0', 'global_step:0', 'beta1_power:0', 'beta2_power:0', \
'emb/AdamW:0', 'emb/AdamW_1:0', 'dense/AdamW:0', 'dense/AdamW_1:0']
adamw_list loss 0.67802
adamw_list emb [[-0.15695, 0.47997, -0.52569], [0.217, -0.54412, -0.09696], [-0.0609, \
-0.363, -0.39857], [-0.11927, -0.05117, 0.12805], [-0.25507, 0.32075, 0.74027], [0.69864, \
0.33059, -0.53903]]
adamw_list dense [0.07232, -0.34794, -0.14513]
adamw_list m [[0.00415, -0.00704, -0.00641], [-0.00011, 0.00014, 0.00016], [0.0, 0.0, \
0.0], [-0.00852, 0.01436, 0.01314], [0.00415, -0.00704, -0.00641], [0.0, 0.0, 0.0]]
adamw_list v [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1e-05, 1e-05], \
[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
momw MomentumWOptimizer MomentumW MomentumW ['momentum']
momw ['emb:0', 'dense:0', 'global_step:0', 'emb/MomentumW:0', 'dense/MomentumW:0']
momw loss 0.70389
momw emb [[-0.02574, 0.30111, -0.55409], [0.07872, -0.35455, 0.02479], [-0.0609, -0.363, \
-0.39857], [-0.19362, 0.04659, 0.1884], [-0.10986, 0.1646, 0.5313], [0.69864, 0.33059, \
-0.53903]]
momw dense [0.2005, -0.27266, -0.28448]
momw momentum [[0.05419, -0.06394, -0.07743], [-0.00215, 0.00252, 0.00308], [0.0, 0.0, \
0.0], [-0.11269, 0.13292, 0.16102], [0.05419, -0.06394, -0.07743], [0.0, 0.0, 0.0]]
lazy LazyAdamOptimizer Adam Adam ['m', 'v']
lazy ['emb:0', 'dense:0', 'global_step:0', 'beta1_power:0', 'beta2_power:0', \
'emb/Adam:0', 'emb/Adam_1:0', 'dense/Adam:0', 'dense/Adam_1:0']
lazy loss 0.67661
lazy emb [[-0.15409, 0.47567, -0.52756], [0.16379, -0.49574, -0.056], [-0.0609, -0.363, \
-0.39857], [-0.11915, -0.04914, 0.12778], [-0.2522, 0.31644, 0.73839], [0.69864, 0.33059, \
-0.53903]]
lazy dense [0.13132, -0.4384, -0.23449]
lazy m [[0.00472, -0.00768, -0.00722], [-0.00015, 0.00021, 0.00022], [0.0, 0.0, 0.0], \
[-0.00974, 0.01579, 0.0149], [0.00472, -0.00768, -0.00722], [0.0, 0.0, 0.0]]
lazy v [[1e-05, 2e-05, 2e-05], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [4e-05, 0.0001, 9e-05], \
[1e-05, 2e-05, 2e-05], [0.0, 0.0, 0.0]]
sgdw OptimizerWithDecoupledWeightDecay GradientDescent GradientDescent []
sgdw ['emb:0', 'dense:0', 'global_step:0']
sgdw loss 0.69815
sgdw emb [[-0.04153, 0.36725, -0.62996], [0.09223, -0.41409, 0.02834], [-0.0609, -0.363, \
-0.39857], [-0.20199, 0.02112, 0.18596], [-0.13964, 0.20803, 0.63599], [0.69864, 0.33059, \
-0.53903]]
sgdw dense [0.20378, -0.32376, -0.28653]
TypeError
adagradw OptimizerWithDecoupledWeightDecay Adagrad Adagrad ['accumulator']
adagradw ['emb:0', 'dense:0', 'global_step:0', 'emb/Adagrad:0', 'dense/Adagrad:0']
adagradw loss 0.68658
adagradw emb [[-0.06151, 0.37998, -0.56137], [0.08739, -0.39057, 0.02583], [-0.0609, \
-0.363, -0.39857], [-0.14452, -0.04939, 0.11153], [-0.15386, 0.23012, 0.63013], [0.69864, \
0.33059, -0.53903]]
adagradw dense [0.18213, -0.37453, -0.25149]
adagradw accumulator [[0.30109, 0.30203, 0.30219], [0.3, 0.3, 0.3], [0.3, 0.3, 0.3], \
[0.30466, 0.30862, 0.3094], [0.30109, 0.30203, 0.30219], [0.3, 0.3, 0.3]]
OptimizerWithDecoupledWeightDecay
"""


def test_program_contrib_weight_decay_lazy_adam(capsys):
    _program_contrib_weight_decay_lazy_adam()
    _same(capsys.readouterr().out, _EXPECTED_CONTRIB_WEIGHT_DECAY_LAZY_ADAM)


def _program_moving_average_optimizer():
    """The contrib.opt.MovingAverageOptimizer and its swapping saver."""
    d = tempfile.mkdtemp()
    np.random.seed(1)
    X = np.random.randn(10, 2).astype(np.float32)
    Y = (X @ np.array([[2.0], [-1.0]], np.float32)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.ones_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        gs = tf.train.get_or_create_global_step()
        opt = copt.MovingAverageOptimizer(
            tf.train.GradientDescentOptimizer(0.1), average_decay=0.5, num_updates=gs
        )
        try:
            opt.swapping_saver()
        except RuntimeError as e:
            print("err", type(e).__name__)
        train = opt.minimize(loss, global_step=gs)
        print(train.name, train.type)
        print([v.name for v in tf.global_variables()])
        print([v.name for v in tf.moving_average_variables()])
        saver = opt.swapping_saver(max_to_keep=1)
        print(
            type(saver).__name__,
            saver.saver_def.filename_tensor_name if hasattr(saver, "saver_def") else None,
        )
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for _ in range(4):
                s.run(train, {x: X, y: Y})
            print(
                "w",
                np.round(s.run(w), 5).ravel().tolist(),
                "avg",
                np.round(s.run(opt._ema.average(w)), 5).ravel().tolist(),
            )
            print(
                "b",
                np.round(s.run(b), 5).tolist(),
                np.round(s.run(opt._ema.average(b)), 5).tolist(),
            )
            p = saver.save(s, os.path.join(d, "m"), global_step=gs)
            print(os.path.basename(p))
    r = tf.train.NewCheckpointReader(p)
    print(sorted(r.get_variable_to_shape_map()))
    print("w in ckpt", np.round(r.get_tensor("w"), 5).ravel().tolist())
    print("avg in ckpt", np.round(r.get_tensor("w/ExponentialMovingAverage"), 5).ravel().tolist())
    g2 = tf.Graph()
    with g2.as_default():
        w = tf.get_variable("w", [2, 1])
        b = tf.get_variable("b", [1])
        with tf.Session() as s:
            tf.train.Saver([w, b]).restore(s, p)
            print("eval w", np.round(s.run(w), 5).ravel().tolist())
    # non sequential update + error on missing swap target
    g3 = tf.Graph()
    with g3.as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        u = tf.Variable(3.0, name="u")
        opt = copt.MovingAverageOptimizer(
            tf.train.MomentumOptimizer(0.1, 0.5), average_decay=0.9, sequential_update=False
        )
        tr = opt.minimize(tf.reduce_sum(v * v) + u * u)
        print([x.name for x in tf.global_variables()])
        try:
            opt.swapping_saver(var_list=[v, u])
        except ValueError as e:
            print("err", type(e).__name__, str(e)[:60])
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for _ in range(3):
                s.run(tr)
            print(
                np.round(s.run(v), 5).tolist(),
                np.round(s.run(opt._ema.average(v)), 5).tolist(),
                round(float(s.run(opt._ema.average(u))), 5),
            )
    shutil.rmtree(d)


_EXPECTED_MOVING_AVERAGE_OPTIMIZER = """\
err RuntimeError
train_with_avg NoOp
['w:0', 'b:0', 'global_step:0', 'w/ExponentialMovingAverage:0', \
'b/ExponentialMovingAverage:0']
['w:0', 'b:0']
Saver swapping_saver/Const:0
w [1.00631, -0.73595] avg [0.93312, -0.70471]
b [1.18944] [1.21038]
m-4
['b', 'b/ExponentialMovingAverage', 'global_step', 'w', 'w/ExponentialMovingAverage']
w in ckpt [0.93312, -0.70471]
avg in ckpt [1.00631, -0.73595]
eval w [0.93312, -0.70471]
['v:0', 'u:0', 'v/Momentum:0', 'u/Momentum:0', 'v/ExponentialMovingAverage:0', \
'u/ExponentialMovingAverage:0']
err ValueError Variable to swap v/ExponentialMovingAverage is not part of v
[0.302, 0.604] [0.936, 1.872] 2.808
"""


def test_program_moving_average_optimizer(capsys):
    _program_moving_average_optimizer()
    _same(capsys.readouterr().out, _EXPECTED_MOVING_AVERAGE_OPTIMIZER)


def _program_gating_and_aggregation():
    """Every gate_gradients x aggregation_method pair and the optimizer's errors."""
    np.random.seed(2)
    X = np.random.randn(6, 3).astype(np.float32)
    for gate in (
        tf.train.Optimizer.GATE_NONE,
        tf.train.Optimizer.GATE_OP,
        tf.train.Optimizer.GATE_GRAPH,
    ):
        for agg in (
            tf.AggregationMethod.ADD_N,
            tf.AggregationMethod.EXPERIMENTAL_TREE,
            tf.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N,
        ):
            g = tf.Graph()
            with g.as_default():
                tf.set_random_seed(9)
                x = tf.placeholder(tf.float32, [None, 3])
                with tf.variable_scope("enc"):
                    w = tf.get_variable("w", [3, 3])
                h1 = tf.matmul(x, w)
                h2 = tf.matmul(tf.nn.relu(h1), w)
                h3 = tf.matmul(tf.tanh(h2), w)
                frozen = tf.get_variable(
                    "frozen", [3], trainable=False, initializer=tf.ones_initializer()
                )
                loss = tf.reduce_mean(tf.square(h3 * frozen)) + tf.reduce_sum(tf.stop_gradient(w))
                opt = tf.train.RMSPropOptimizer(0.01, momentum=0.5)
                gv = opt.compute_gradients(loss, gate_gradients=gate, aggregation_method=agg)
                gs = tf.Variable(10, dtype=tf.int64, trainable=False, name="step")
                tr = opt.apply_gradients(gv, global_step=gs, name="apply")
                ops = [o.type for o in g.get_operations() if o.name.startswith("gradients/")]
                print(
                    gate,
                    agg,
                    tr.name,
                    tr.type,
                    [(gg.name, vv.name) for gg, vv in gv],
                    "AddN" in ops,
                )
                with tf.Session() as s:
                    s.run(tf.global_variables_initializer())
                    for _ in range(2):
                        s.run(tr, {x: X})
                    print(np.round(s.run(w), 5)[0].tolist(), s.run(gs))
    g = tf.Graph()
    with g.as_default():
        a = tf.Variable(1.0, name="a")
        bb = tf.Variable(2.0, name="bb")
        c = tf.constant(3.0)
        opt = tf.train.AdamOptimizer()
        gv = opt.compute_gradients(a * c, var_list=[a, bb])
        print([(gg is None, v.name) for gg, v in gv])
        try:
            opt.minimize(c * 2.0, var_list=[bb])
        except ValueError as e:
            print("ValueError", str(e)[:70])
        try:
            opt.apply_gradients([(None, bb)])
        except ValueError as e:
            print("ValueError", str(e)[:70])
        try:
            opt.compute_gradients(a * c, var_list=[])
        except ValueError as e:
            print("ValueError", str(e)[:70])
        try:
            tf.train.GradientDescentOptimizer(0.1).minimize(
                tf.constant(1, tf.int32) * tf.Variable(1, name="iv")
            )
        except ValueError as e:
            print("ValueError", str(e)[:45])
        gl = opt.compute_gradients(a * c, var_list=[a], grad_loss=tf.constant(2.0))
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            print(s.run(gl[0][0]))
        print(opt.get_name(), opt._name, tf.train.Optimizer.GATE_GRAPH)


_EXPECTED_GATING_AND_AGGREGATION = """\
0 0 apply AssignAdd [('gradients/AddN:0', 'enc/w:0')] True
[-0.83198, 0.04687, -0.04474] 12
0 1 apply AssignAdd [('gradients/enc/w/read_gradient_sum/AddN_1:0', 'enc/w:0')] True
[-0.83198, 0.04687, -0.04474] 12
0 2 apply AssignAdd [('gradients/enc/w/read_gradient_sum/AddN_1:0', 'enc/w:0')] True
[-0.83198, 0.04687, -0.04474] 12
1 0 apply AssignAdd [('gradients/AddN:0', 'enc/w:0')] True
[-0.83198, 0.04687, -0.04474] 12
1 1 apply AssignAdd [('gradients/enc/w/read_gradient_sum/AddN_1:0', 'enc/w:0')] True
[-0.83198, 0.04687, -0.04474] 12
1 2 apply AssignAdd [('gradients/enc/w/read_gradient_sum/AddN_1:0', 'enc/w:0')] True
[-0.83198, 0.04687, -0.04474] 12
2 0 apply AssignAdd [('tuple/control_dependency:0', 'enc/w:0')] True
[-0.83198, 0.04687, -0.04474] 12
2 1 apply AssignAdd [('tuple/control_dependency:0', 'enc/w:0')] True
[-0.83198, 0.04687, -0.04474] 12
2 2 apply AssignAdd [('tuple/control_dependency:0', 'enc/w:0')] True
[-0.83198, 0.04687, -0.04474] 12
[(False, 'a:0'), (True, 'bb:0')]
ValueError No gradients provided for any variable, check your graph for ops that 
ValueError No gradients provided for any variable: ["<tf.Variable 'bb:0' shape=()
ValueError No variables to optimize.
ValueError Invalid type tf.int32 for mul_3:0, expected: 
6.0
Adam Adam 2
"""


def test_program_gating_and_aggregation(capsys):
    _program_gating_and_aggregation()
    _same(capsys.readouterr().out, _EXPECTED_GATING_AND_AGGREGATION)


def _program_resource_and_custom_optimizers():
    """Resource variables, a user-written optimizer and a fed learning rate."""
    # resource variables (use_resource=True) with sparse and dense grads; a user-written optimizer
    ids_np = np.array([2, 0, 2, 2], np.int32)

    class SignSGD(tf.train.Optimizer):
        def __init__(self, lr, name="SignSGD"):
            super().__init__(False, name)
            self._lr = lr

        def _create_slots(self, var_list):
            for v in var_list:
                self._zeros_slot(v, "steps", self._name)

        def _prepare(self):
            self._lr_t = tf.convert_to_tensor(self._lr, name="lr")

        def _apply_dense(self, grad, var):
            steps = self.get_slot(var, "steps")
            s = tf.assign_add(steps, tf.ones_like(steps))
            return tf.group(tf.assign_sub(var, self._lr_t * tf.sign(grad)), s)

        def _resource_apply_dense(self, grad, var):
            steps = self.get_slot(var, "steps")
            s = steps.assign_add(tf.ones_like(steps))
            return tf.group(var.assign_sub(self._lr_t * tf.sign(grad)), s)

        def _apply_sparse(self, grad, var):
            return tf.scatter_sub(var, grad.indices, self._lr_t * tf.sign(grad.values))

        def _resource_apply_sparse(self, grad, var, indices):
            return var.scatter_sub(tf.IndexedSlices(self._lr_t * tf.sign(grad), indices))

    def run(name, make, resource):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(5)
            ids = tf.placeholder(tf.int32, [None])
            lr = tf.placeholder_with_default(0.1, [], name="lr")
            emb = tf.get_variable(
                "emb", [4, 2], use_resource=resource, initializer=tf.random_normal_initializer()
            )
            w = tf.get_variable(
                "w", [2], use_resource=resource, initializer=tf.constant_initializer([0.5, -0.5])
            )
            out = tf.reduce_sum(tf.nn.embedding_lookup(emb, ids) * w, axis=1)
            loss = tf.reduce_mean(tf.square(out - 1.0))
            opt = make(lr)
            train = opt.minimize(loss)
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                s.run(train, {ids: ids_np})
                s.run(train, {ids: ids_np, lr: 0.05})
                print(
                    name, resource, np.round(s.run(emb), 5).tolist(), np.round(s.run(w), 5).tolist()
                )
                print(name, resource, sorted(v.name for v in opt.variables()))
                print(
                    name,
                    resource,
                    [
                        (sn, np.round(s.run(opt.get_slot(w, sn)), 5).tolist())
                        for sn in sorted(opt.get_slot_names())
                    ],
                )

    for res in (False, True):
        run("sign", lambda lr: SignSGD(lr), res)
        run(
            "adagrad", lambda lr: tf.train.AdagradOptimizer(lr, initial_accumulator_value=0.01), res
        )
        run(
            "ftrl",
            lambda lr: tf.train.FtrlOptimizer(
                lr, l1_regularization_strength=0.001, l2_shrinkage_regularization_strength=0.01
            ),
            res,
        )
        run("adam", lambda lr: tf.train.AdamOptimizer(lr, beta1=0.5), res)
        run("rms", lambda lr: tf.train.RMSPropOptimizer(lr, centered=True, momentum=0.3), res)
        run("mom", lambda lr: tf.train.MomentumOptimizer(lr, 0.7, use_nesterov=True), res)
        run("adadelta", lambda lr: tf.train.AdadeltaOptimizer(lr * 10, rho=0.5), res)
        run(
            "proxada",
            lambda lr: tf.train.ProximalAdagradOptimizer(lr, l1_regularization_strength=0.01),
            res,
        )
        run(
            "proxgd",
            lambda lr: tf.train.ProximalGradientDescentOptimizer(
                lr, l2_regularization_strength=0.1
            ),
            res,
        )

    # schedule errors
    for fn in [
        lambda gs: tf.train.piecewise_constant(gs, [1.5, 3.0], [0.1, 0.2, 0.3]),
        lambda gs: tf.train.piecewise_constant(gs, [1, 3], [0.1, 0.2]),
    ]:
        with tf.Graph().as_default():
            gs = tf.train.get_or_create_global_step()
            try:
                r = fn(gs)
                print("ok", r.name)
            except Exception as e:
                print(type(e).__name__, str(e)[:60])


_EXPECTED_RESOURCE_AND_CUSTOM_OPTIMIZERS = """\
sign False [[-1.56388, -0.8287], [0.26305, -0.8498], [-0.04355, 0.53309], [1.76465, \
1.13215]] [0.35, -0.35]
sign False ['emb/SignSGD:0', 'w/SignSGD:0']
sign False [('steps', [2.0, 2.0])]
adagrad False [[-1.58902, -0.80358], [0.26305, -0.8498], [-0.06519, 0.55471], [1.76465, \
1.13215]] [0.37063, -0.37429]
adagrad False ['emb/Adagrad:0', 'w/Adagrad:0']
adagrad False [('accumulator', [4.54923, 1.28277])]
ftrl False [[-0.26341, -0.17709], [0.26305, -0.8498], [-0.00237, 0.19132], [1.76465, \
1.13215]] [0.14818, -0.11397]
ftrl False ['emb/Ftrl:0', 'emb/Ftrl_1:0', 'w/Ftrl:0', 'w/Ftrl_1:0']
ftrl False [('accum', [3.18174, 1.25255]), ('linear', [-5.28732, 2.55214])]
adam False [[-1.56748, -0.8251], [0.26305, -0.8498], [-0.04709, 0.53663], [1.76465, \
1.13215]] [0.35316, -0.35517]
adam False ['beta1_power:0', 'beta2_power:0', 'emb/Adam:0', 'emb/Adam_1:0', 'w/Adam:0', \
'w/Adam_1:0']
adam False [('m', [1.05693, -0.53567]), ('v', [0.00452, 0.00127])]
rms False [[-1.65024, -0.74453], [0.26305, -0.8498], [-0.02021, 0.5039], [1.76465, \
1.13215]] [0.23557, -0.34132]
rms False ['emb/RMSProp:0', 'emb/RMSProp_1:0', 'emb/RMSProp_2:0', 'w/RMSProp:0', \
'w/RMSProp_1:0', 'w/RMSProp_2:0']
rms False [('mg', [0.27811, -0.14916]), ('momentum', [0.10529, -0.06197]), ('rms', \
[1.22814, 0.93226])]
mom False [[-1.63043, -0.76814], [0.26305, -0.8498], [0.04729, 0.42298], [1.76465, \
1.13215]] [0.08774, -0.27345]
mom False ['emb/Momentum:0', 'w/Momentum:0']
mom False [('momentum', [2.12146, -1.14254])]
adadelta False [[-1.71366, -0.67893], [0.26305, -0.8498], [-0.19333, 0.68287], [1.76465, \
1.13215]] [0.49978, -0.49978]
adadelta False ['emb/Adadelta:0', 'emb/Adadelta_1:0', 'w/Adadelta:0', 'w/Adadelta_1:0']
adadelta False [('accum', [2.21255, 0.68886]), ('accum_update', [0.0, 0.0])]
proxada False [[-1.6101, -0.7768], [0.26305, -0.8498], [-0.06814, 0.55754], [1.76465, \
1.13215]] [0.37115, -0.37768]
proxada False ['emb/ProximalAdagrad:0', 'w/ProximalAdagrad:0']
proxada False [('accumulator', [4.71528, 1.39457])]
proxgd False [[-1.64094, -0.71851], [0.26305, -0.8498], [-0.05396, 0.5292], [1.76465, \
1.13215]] [0.26356, -0.36693]
proxgd False []
proxgd False []
sign True [[-1.56388, -0.8287], [0.26305, -0.8498], [-0.04355, 0.53309], [1.76465, \
1.13215]] [0.35, -0.35]
sign True ['emb/SignSGD:0', 'w/SignSGD:0']
sign True [('steps', [2.0, 2.0])]
adagrad True [[-1.58902, -0.80358], [0.26305, -0.8498], [-0.06519, 0.55471], [1.76465, \
1.13215]] [0.37063, -0.37429]
adagrad True ['emb/Adagrad:0', 'w/Adagrad:0']
adagrad True [('accumulator', [4.54923, 1.28277])]
ftrl True [[-0.26341, -0.17709], [0.26305, -0.8498], [-0.00237, 0.19132], [1.76465, \
1.13215]] [0.14818, -0.11397]
ftrl True ['emb/Ftrl:0', 'emb/Ftrl_1:0', 'w/Ftrl:0', 'w/Ftrl_1:0']
ftrl True [('accum', [3.18174, 1.25255]), ('linear', [-5.28732, 2.55214])]
adam True [[-1.56748, -0.8251], [0.26305, -0.8498], [-0.04709, 0.53663], [1.76465, \
1.13215]] [0.35316, -0.35517]
adam True ['beta1_power:0', 'beta2_power:0', 'emb/Adam:0', 'emb/Adam_1:0', 'w/Adam:0', \
'w/Adam_1:0']
adam True [('m', [1.05693, -0.53567]), ('v', [0.00452, 0.00127])]
rms True [[-1.65024, -0.74453], [0.26305, -0.8498], [-0.02021, 0.5039], [1.76465, \
1.13215]] [0.23557, -0.34132]
rms True ['emb/RMSProp:0', 'emb/RMSProp_1:0', 'emb/RMSProp_2:0', 'w/RMSProp:0', \
'w/RMSProp_1:0', 'w/RMSProp_2:0']
rms True [('mg', [0.27811, -0.14916]), ('momentum', [0.10529, -0.06197]), ('rms', \
[1.22814, 0.93226])]
mom True [[-1.63043, -0.76814], [0.26305, -0.8498], [0.04729, 0.42298], [1.76465, \
1.13215]] [0.08774, -0.27345]
mom True ['emb/Momentum:0', 'w/Momentum:0']
mom True [('momentum', [2.12146, -1.14254])]
adadelta True [[-1.71366, -0.67893], [0.26305, -0.8498], [-0.19333, 0.68287], [1.76465, \
1.13215]] [0.49978, -0.49978]
adadelta True ['emb/Adadelta:0', 'emb/Adadelta_1:0', 'w/Adadelta:0', 'w/Adadelta_1:0']
adadelta True [('accum', [2.21255, 0.68886]), ('accum_update', [0.0, 0.0])]
proxada True [[-1.6101, -0.7768], [0.26305, -0.8498], [-0.06814, 0.55754], [1.76465, \
1.13215]] [0.37115, -0.37768]
proxada True ['emb/ProximalAdagrad:0', 'w/ProximalAdagrad:0']
proxada True [('accumulator', [4.71528, 1.39457])]
proxgd True [[-1.64094, -0.71851], [0.26305, -0.8498], [-0.05396, 0.5292], [1.76465, \
1.13215]] [0.26356, -0.36693]
proxgd True []
proxgd True []
ValueError Boundaries (<dtype: 'float32'>) must have the same dtype as 
ValueError The length of boundaries should be 1 less than the length of
"""


def test_program_resource_and_custom_optimizers(capsys):
    _program_resource_and_custom_optimizers()
    _same(capsys.readouterr().out, _EXPECTED_RESOURCE_AND_CUSTOM_OPTIMIZERS)


def _program_estimator_rmsprop_restarts():
    """An Estimator: SGDR schedule, clipped centered RMSProp and an EMA."""
    np.random.seed(4)
    X = np.random.randn(32, 3).astype(np.float32)
    Y = (X.sum(1, keepdims=True) > 0).astype(np.float32)

    def model_fn(features, labels, mode, params):
        with tf.variable_scope("clf"):
            logits = tf.layers.dense(
                features["x"], 1, kernel_initializer=tf.constant_initializer(0.1), name="out"
            )
        loss = tf.losses.sigmoid_cross_entropy(labels, logits)
        gs = tf.train.get_global_step()
        lr = tf.train.cosine_decay_restarts(params["lr"], gs, 3, t_mul=1.0, m_mul=0.8)
        tf.summary.scalar("lr", lr)
        opt = tf.train.RMSPropOptimizer(lr, decay=0.95, momentum=0.5, centered=True)
        gv = opt.compute_gradients(loss)
        grads, vs = zip(*gv)
        grads, _ = tf.clip_by_global_norm(grads, 1.0)
        ema = tf.train.ExponentialMovingAverage(0.9, num_updates=gs)
        with tf.control_dependencies([opt.apply_gradients(zip(grads, vs), global_step=gs)]):
            train = ema.apply(tf.trainable_variables())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train)

    d = tempfile.mkdtemp()
    est = tf.estimator.Estimator(
        model_fn,
        model_dir=d,
        params={"lr": 0.1},
        config=tf.estimator.RunConfig(
            tf_random_seed=1, save_summary_steps=2, log_step_count_steps=100
        ),
    )
    inp = tf.estimator.inputs.numpy_input_fn(
        {"x": X}, Y, batch_size=8, num_epochs=None, shuffle=False
    )
    est.train(inp, steps=7)
    names = sorted(est.get_variable_names())
    print(names)
    print(np.round(est.get_variable_value("clf/out/kernel"), 5).ravel().tolist())
    print(
        np.round(est.get_variable_value("clf/out/kernel/ExponentialMovingAverage"), 5)
        .ravel()
        .tolist()
    )
    print(np.round(est.get_variable_value("clf/out/kernel/RMSProp_1"), 5).ravel().tolist())
    print(est.get_variable_value("global_step"))
    est.train(inp, steps=2)
    print(
        np.round(est.get_variable_value("clf/out/bias"), 5).tolist(),
        est.get_variable_value("global_step"),
    )
    print(sorted(f for f in os.listdir(d) if not f.startswith("events")))
    shutil.rmtree(d)


_EXPECTED_ESTIMATOR_RMSPROP_RESTARTS = """\
['clf/out/bias', 'clf/out/bias/ExponentialMovingAverage', 'clf/out/bias/RMSProp', \
'clf/out/bias/RMSProp_1', 'clf/out/bias/RMSProp_2', 'clf/out/kernel', \
'clf/out/kernel/ExponentialMovingAverage', 'clf/out/kernel/RMSProp', \
'clf/out/kernel/RMSProp_1', 'clf/out/kernel/RMSProp_2', 'global_step']
[0.25858, 0.13044, 0.32897]
[0.23436, 0.12433, 0.3071]
[-0.0894, -0.01021, -0.07582]
7
[-0.07255] 9
['checkpoint', 'graph.pbtxt', 'model.ckpt-0.0data-00000-of-00001', 'model.ckpt-0.0index', \
'model.ckpt-0.0meta', 'model.ckpt-7.0data-00000-of-00001', 'model.ckpt-7.0index', \
'model.ckpt-7.0meta', 'model.ckpt-9.0data-00000-of-00001', 'model.ckpt-9.0index', \
'model.ckpt-9.0meta']
"""


def test_program_estimator_rmsprop_restarts(capsys):
    _program_estimator_rmsprop_restarts()
    _same(capsys.readouterr().out, _EXPECTED_ESTIMATOR_RMSPROP_RESTARTS)


def _program_gan_two_adams():
    """GAN-style: two Adams, one minimized twice; hyperparameter tensors by name."""
    with tf.Graph().as_default():
        with tf.variable_scope("gen"):
            g_w = tf.get_variable("w", [2], initializer=tf.constant_initializer([0.3, -0.2]))
        with tf.variable_scope("disc"):
            d_w = tf.get_variable("w", [2], initializer=tf.constant_initializer([0.1, 0.4]))
            d_b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
        d_loss = tf.reduce_sum(tf.square(d_w - g_w)) + tf.square(d_b - 1.0)
        g_loss = -tf.reduce_sum(d_w * g_w)
        gs = tf.train.get_or_create_global_step()
        beta1 = tf.placeholder_with_default(0.5, [], name="beta1")
        d_opt = tf.train.AdamOptimizer(learning_rate=lambda: 0.01 * 2.0, beta1=beta1, name="d_adam")
        g_opt = tf.train.AdamOptimizer(0.02, beta1=0.5, beta2=0.9)
        d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="disc")
        g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="gen")
        d_train = d_opt.minimize(d_loss, var_list=d_vars, global_step=gs)
        g_train = g_opt.minimize(g_loss, var_list=g_vars)
        g_train2 = g_opt.minimize(
            g_loss + 0.1 * tf.reduce_sum(tf.square(g_w)), var_list=g_vars, name="g2"
        )
        print(d_train.name, g_train.name, g_train2.name)
        print([v.name for v in tf.global_variables()])
        print(callable(d_opt._lr), d_opt._lr_t.name, d_opt._beta1_t.name, g_opt._beta2_t.name)
        print([v.name for v in d_opt.variables()], [v.name for v in g_opt.variables()])
        m = tf.train.MomentumOptimizer(0.1, 0.9)
        a = tf.train.AdagradOptimizer(0.1)
        r = tf.train.RMSPropOptimizer(0.1)
        f = tf.train.FtrlOptimizer(0.1)
        sgd = tf.train.GradientDescentOptimizer(0.1)
        for o in (m, a, r, f, sgd):
            o.minimize(g_loss, var_list=g_vars)
        print(
            m._learning_rate_tensor.name,
            m._momentum_tensor.name,
            a._learning_rate_tensor.name,
            r._learning_rate_tensor.name,
            r._decay_tensor.name,
            r._momentum_tensor.name,
            r._epsilon_tensor.name,
        )
        print(
            f._learning_rate_tensor.name,
            f._l1_regularization_strength_tensor.name,
            f._learning_rate_power_tensor.name,
            sgd._learning_rate_tensor.name,
        )
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for i in range(3):
                s.run(d_train, {beta1: 0.5 + 0.1 * i})
                s.run(g_train)
                s.run(g_train2)
            print(
                np.round(s.run(g_w), 5).tolist(),
                np.round(s.run(d_w), 5).tolist(),
                round(float(s.run(d_b)), 5),
                s.run(gs),
            )
            print(
                np.round(s.run(list(g_opt._get_beta_accumulators())), 5).tolist(),
                np.round(s.run(list(d_opt._get_beta_accumulators())), 5).tolist(),
            )


_EXPECTED_GAN_TWO_ADAMS = """\
d_adam Adam g2
['gen/w:0', 'disc/w:0', 'disc/b:0', 'global_step:0', 'beta1_power:0', 'beta2_power:0', \
'disc/w/d_adam:0', 'disc/w/d_adam_1:0', 'disc/b/d_adam:0', 'disc/b/d_adam_1:0', \
'beta1_power_1:0', 'beta2_power_1:0', 'gen/w/Adam:0', 'gen/w/Adam_1:0']
True d_adam/learning_rate:0 beta1:0 g2/beta2:0
['beta1_power:0', 'beta2_power:0', 'disc/b/d_adam:0', 'disc/b/d_adam_1:0', \
'disc/w/d_adam:0', 'disc/w/d_adam_1:0'] ['beta1_power_1:0', 'beta2_power_1:0', \
'gen/w/Adam:0', 'gen/w/Adam_1:0']
Momentum/learning_rate:0 Momentum/momentum:0 Adagrad/learning_rate:0 \
RMSProp/learning_rate:0 RMSProp/decay:0 RMSProp/momentum:0 RMSProp/epsilon:0
Ftrl/learning_rate:0 Ftrl/l1_regularization_strength:0 Ftrl/learning_rate_power:0 \
GradientDescent/learning_rate:0
[0.41401, -0.08145] [0.15748, 0.34322] 0.05718 3
[0.00781, 0.4783] [0.105, 0.99601]
"""


def test_program_gan_two_adams(capsys):
    _program_gan_two_adams()
    _same(capsys.readouterr().out, _EXPECTED_GAN_TWO_ADAMS)


# -- focused tests, one per fixed class ------------------------------------------------


def _embedding_step(opt_fn, ids, steps=1):
    with tf.Graph().as_default():
        emb = tf.Variable(np.ones((3, 1), np.float32), name="emb")
        w = tf.Variable([2.0], name="w")
        loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, ids)) * 0.0 + tf.reduce_sum(w) * 0.0
        opt = opt_fn()
        train = opt.minimize(loss)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for _ in range(steps):
                s.run(train)
            return s.run(emb).ravel().tolist(), s.run(w).tolist(), opt


def test_decoupled_decay_on_repeated_sparse_rows_decays_each_row_once():
    # zero gradients: only the decay acts, on the touched rows (0 twice, 2 once)
    emb, w, _ = _embedding_step(lambda: copt.AdamWOptimizer(0.1, learning_rate=0.1), [0, 0, 2])
    np.testing.assert_allclose(emb, [0.9, 1.0, 0.9], rtol=1e-6)
    np.testing.assert_allclose(w, [1.8], rtol=1e-6)
    emb, _, _ = _embedding_step(lambda: copt.MomentumWOptimizer(0.5, 0.1, 0.9), [1, 1, 1], steps=2)
    np.testing.assert_allclose(emb, [1.0, 0.25, 1.0], rtol=1e-6)


def test_gradient_descent_scatters_sparse_rows_without_subclass_apply_sparse():
    sgdw = copt.extend_with_decoupled_weight_decay(tf.train.GradientDescentOptimizer)
    emb, w, _ = _embedding_step(lambda: sgdw(0.5, learning_rate=0.1), [0, 0, 2])
    assert emb == [1.0, 1.0, 1.0]  # TF: the embedding is not decayed
    np.testing.assert_allclose(w, [1.0], rtol=1e-6)  # the dense variable is

    calls = []

    class Logged(tf.train.GradientDescentOptimizer):
        def _apply_sparse(self, grad, var):
            calls.append(var.op.name)
            return super()._apply_sparse(grad, var)

        def _resource_apply_sparse(self, grad, handle, indices):
            calls.append(handle.op.name)
            return super()._resource_apply_sparse(grad, handle, indices)

    for resource in (False, True):
        with tf.Graph().as_default():
            emb = tf.get_variable(
                "emb", initializer=np.ones((3, 2), np.float32), use_resource=resource
            )
            train = Logged(0.5).minimize(tf.reduce_sum(tf.gather(emb, [1, 1])))
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                s.run(train)
                assert s.run(emb).tolist() == [[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]
    assert calls == []


def test_lazy_adam_keeps_adams_name():
    with tf.Graph().as_default():
        emb = tf.Variable(np.ones((3, 1), np.float32), name="emb")
        opt = copt.LazyAdamOptimizer(0.1)
        opt.minimize(tf.reduce_sum(tf.nn.embedding_lookup(emb, [1])))
        assert opt.get_name() == "Adam"
        assert sorted(v.name for v in opt.variables()) == [
            "beta1_power:0",
            "beta2_power:0",
            "emb/Adam:0",
            "emb/Adam_1:0",
        ]
    assert copt.LazyAdamOptimizer(0.1, name="Lazy").get_name() == "Lazy"


def test_extend_with_decoupled_weight_decay_class_and_decay_lists():
    sgdw = copt.extend_with_decoupled_weight_decay(tf.train.GradientDescentOptimizer)
    assert sgdw.__name__ == "OptimizerWithDecoupledWeightDecay"
    with pytest.raises(TypeError):
        sgdw(0.5, 0.1)  # TF1: the base's arguments are keywords only
    with tf.Graph().as_default():
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(1.0, name="b")
        opt = sgdw(weight_decay=0.5, learning_rate=0.1)
        gv = opt.compute_gradients(a * 0.0 + b * 0.0)
        only_a = opt.apply_gradients(gv, decay_var_list=[a])
        both = opt.apply_gradients(gv)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            s.run(only_a)
            assert s.run([a, b]) == [0.5, 1.0]
            s.run(both)
            assert s.run([a, b]) == [0.25, 0.5]


def test_moving_average_optimizer_api():
    with tf.Graph().as_default():
        w = tf.Variable([1.0, -1.0], name="w")
        opt = copt.MovingAverageOptimizer(
            tf.train.GradientDescentOptimizer(0.25), average_decay=0.5
        )
        with pytest.raises(RuntimeError, match="swapping_saver"):
            opt.swapping_saver()
        step = opt.minimize(tf.reduce_sum(w * w))
        assert (step.name, step.type) == ("train_with_avg", "NoOp")
        avg = opt._ema.average(w)
        assert avg.name == "w/ExponentialMovingAverage:0"
        saver = opt.swapping_saver()
        assert isinstance(saver, tf.train.Saver)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            s.run(step)
            # w: 1 - 0.25 * 2 = 0.5; average after the update: 0.5 * 1 + 0.5 * 0.5
            assert s.run(w).tolist() == [0.5, -0.5]
            assert s.run(avg).tolist() == [0.75, -0.75]
        with pytest.raises(ValueError, match="not part of variables to save"):
            opt.swapping_saver(var_list=[w])


def test_tree_aggregation_names_pairwise_sums():
    for method in (
        tf.AggregationMethod.EXPERIMENTAL_TREE,
        tf.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N,
    ):
        with tf.Graph().as_default():
            x = tf.constant([1.0, 2.0], name="x")
            y = tf.reduce_sum(x * x + 3.0 * x + tf.sin(x))
            (g,) = tf.gradients(y, [x], aggregation_method=method)
            # four contributions (x * x gives two): three sums of two, TF's names
            assert g.name == "gradients/x_gradient_sum/AddN_2:0"
            assert g.op.type == "AddN" and len(g.op.inputs) == 2
            assert g.op.inputs[0].name == "gradients/x_gradient_sum/AddN_1:0"
            with tf.Session() as s:
                np.testing.assert_allclose(
                    s.run(g), 2 * np.array([1.0, 2.0]) + 3.0 + np.cos([1.0, 2.0]), rtol=1e-6
                )
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0], name="x")
        (g,) = tf.gradients(tf.reduce_sum(x * x + 3.0 * x), [x])
        assert g.name == "gradients/AddN:0"


def test_optimizer_hyperparameter_attributes_and_ftrl_ops():
    with tf.Graph().as_default() as g:
        gs = tf.train.get_or_create_global_step()
        w = tf.Variable([1.0, 2.0], name="w")
        loss = tf.reduce_sum(w * w)
        ftrl = tf.train.FtrlOptimizer(
            0.1, l1_regularization_strength=0.01, l2_shrinkage_regularization_strength=0.1
        )
        ftrl.minimize(loss)
        assert ftrl._l1_regularization_strength == 0.01
        assert ftrl._l2_shrinkage_regularization_strength == 0.1
        assert ftrl._adjusted_l2_regularization_strength_tensor.name == "Ftrl/add:0"
        assert ftrl._beta_tensor.name == "Ftrl/beta:0"
        assert ftrl._l1_regularization_strength_tensor.name == "Ftrl/l1_regularization_strength:0"
        assert (
            ftrl._l2_shrinkage_regularization_strength_tensor.name
            == "Ftrl/l2_shrinkage_regularization_strength:0"
        )
        names = {o.name for o in g.get_operations() if o.name.startswith("Ftrl/")}
        assert {"Ftrl/Maximum", "Ftrl/mul", "Ftrl/truediv", "Ftrl/add"} <= names
        assert "Ftrl/l2_regularization_strength" not in names
        pgd = tf.train.ProximalGradientDescentOptimizer(0.1, l2_regularization_strength=0.2)
        pada = tf.train.ProximalAdagradOptimizer(0.1, initial_accumulator_value=0.3)
        da = tf.train.AdagradDAOptimizer(0.1, gs, initial_gradient_squared_accumulator_value=0.4)
        for opt in (pgd, pada, da):
            opt.minimize(loss)
        assert pgd._l2_regularization_strength == 0.2
        assert (
            pgd._l2_regularization_strength_tensor.name
            == "ProximalGradientDescent/l2_regularization_strength:0"
        )
        assert pada._initial_accumulator_value == 0.3
        assert pada._learning_rate_tensor.name == "ProximalAdagrad/learning_rate:0"
        assert da._initial_gradient_squared_accumulator_value == 0.4
        assert da._learning_rate_tensor.name == "AdagradDA/learning_rate:0"
        assert da._global_step_on_worker.op.type == "AddV2"
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            # beta = 0: the adjusted L2 strength is the plain one
            assert s.run(ftrl._adjusted_l2_regularization_strength_tensor) == 0.0


# TensorFlow's names (tf-oracle): slot initializers and
# AdagradDA's per-update casts
_TF_UPDATE_NAMES = {
    ("adagrad", True): ["w/Adagrad/Initializer/Const"],
    ("rms", False): [
        "w/RMSProp/Initializer/ones",
        "w/RMSProp_1/Initializer/zeros",
        "w/RMSProp_2/Initializer/zeros",
    ],
    ("rms", True): [
        "w/RMSProp/Initializer/ones",
        "w/RMSProp_1/Initializer/zeros",
        "w/RMSProp_2/Initializer/zeros",
    ],
    ("ftrl", True): [
        "w/Ftrl/Initializer/mul",
        "w/Ftrl/Initializer/mul/y",
        "w/Ftrl/Initializer/ones",
        "w/Ftrl_1/Initializer/zeros",
    ],
    ("pada", False): ["Const_1"],
    ("ada_da", True): [
        "AdagradDA/update_w/Cast/x",
        "AdagradDA/update_w/Cast_1/x",
        "Const_1",
        "Const_2",
    ],
}


def test_slot_initializers_and_sparse_dedup_named_as_tf():
    # TF also builds ``<Opt>/update_w/Unique`` + ``UnsortedSegmentSum`` before a sparse
    # update; tf.train's own sparse kernels here sum repeated rows themselves (same
    # values; the two ops cost wide & deep 20-30 % of its throughput), so they are
    # left out of the comparison.
    makers = {
        "adagrad": lambda gs: tf.train.AdagradOptimizer(0.1),
        "rms": lambda gs: tf.train.RMSPropOptimizer(0.1, centered=True, momentum=0.2),
        "ftrl": lambda gs: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.1),
        "pada": lambda gs: tf.train.ProximalAdagradOptimizer(0.1),
        "ada_da": lambda gs: tf.train.AdagradDAOptimizer(0.1, gs),
    }
    for (name, sparse), expected in _TF_UPDATE_NAMES.items():
        with tf.Graph().as_default() as g:
            gs = tf.train.get_or_create_global_step()
            w = tf.get_variable("w", [3, 2])
            loss = tf.reduce_sum(tf.gather(w, [0, 2, 2])) if sparse else tf.reduce_sum(w * w)
            opt = makers[name](gs)
            first = len(g.get_operations())
            train = opt.minimize(loss)
            names = sorted(
                o.name
                for o in g.get_operations()[first:]
                if "Initializer" in o.name
                or "Cast" in o.name
                or o.name.startswith("Const")
            )
            names = [n for n in names if not n.startswith(("w/Initializer", "gradients/"))]
            assert names == expected, (name, sparse, names)
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                before = s.run(w)
                s.run(train)
                assert not np.allclose(s.run(w), before)
