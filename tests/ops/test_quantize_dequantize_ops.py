"""Simulated quantization: `tf.quantization.quantize_and_dequantize` (the
``QuantizeAndDequantizeV2`` op, straight-through gradient) and
`tf.quantization.quantize_and_dequantize_v2` (``QuantizeAndDequantizeV4``, gradient masked
to the range, through ``QuantizeAndDequantizeV4Grad``).

The values marked "oracle" were printed by TensorFlow 2.15 (`tf.compat.v1`, CPU) through
`/work/shared/tools/tf-oracle` for the same inputs (script: the `CASES` below, each run
through both functions in float32, every third one in float64 too, with the upstream
gradient `G`/`GM`); they are compared bit for bit, signed zeros included. The random
cases compare with `_reference`, a per-element Python version of the rule written here.
Finite-difference checks of the gradients live in `test_gradient_registry.py`
(`quantize_cases.GRADIENT_CASES`): inside the range the straight-through gradient is by
design not the derivative of a step function.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors

QDQ = tf.quantization.quantize_and_dequantize
QDQ_V2 = tf.quantization.quantize_and_dequantize_v2

X = [-1.3, -0.2, 0.0, 0.37, 2.9, 0.51, -0.75, 0.125]
H = [0.5, 1.5, -0.5, -1.5, 2.5, -2.5, 6.5, -7.5]  # halves: the two round modes differ
M = [[-1.0, 0.3, 2.0, -0.45], [0.8, -2.6, 0.05, 1.1], [0.2, 0.9, -0.3, 3.7]]
G = [0.5, -1.0, 2.0, 3.0, -0.25, 1.5, 0.75, -2.0]
GM = [[1.0, 2.0, 3.0, 4.0], [-1.0, -2.0, -3.0, -4.0], [0.5, 0.25, -0.5, 1.5]]

CASES = [  # (x, input_min, input_max, keyword arguments)
    (X, 0.0, 0.0, {}),
    (X, -1.0, 1.0, {"range_given": True, "num_bits": 4}),
    (X, 0.0, 0.0, {"num_bits": 16}),
    (X, -5.0, 5.0, {"num_bits": 16, "range_given": True}),
    (X, 0.0, 0.0, {"signed_input": False}),
    (X, 0.0, 2.0, {"signed_input": False, "range_given": True, "num_bits": 4}),
    (X, -1.0, 1.0, {"narrow_range": True, "range_given": True}),
    (X, 0.0, 0.0, {"narrow_range": True, "num_bits": 4}),
    (X, -0.5, 2.0, {"range_given": True, "num_bits": 4}),
    (X, -0.5, 2.0, {"range_given": True, "num_bits": 4, "round_mode": "HALF_UP"}),
    (H, -8.0, 7.0, {"range_given": True, "num_bits": 4}),
    (H, -8.0, 7.0, {"range_given": True, "num_bits": 4, "round_mode": "HALF_UP"}),
    (H, 0.0, 0.0, {"round_mode": "HALF_UP", "signed_input": False}),
    ([0.0, 0.0], 0.0, 0.0, {}),
    (X, 0.0, 0.0, {"range_given": True}),
    (M, [0.0] * 4, [0.0] * 4, {"axis": 1}),
    (M, [-1.0, -2.0, -0.5], [1.0, 0.5, 4.0], {"axis": 0, "range_given": True, "num_bits": 4}),
    (M, [0.0] * 4, [0.0] * 4, {"axis": -1, "signed_input": False, "round_mode": "HALF_UP"}),
    (M, [-1.0] * 4, [1.0] * 4, {"axis": 1, "range_given": True, "narrow_range": True,
                                "num_bits": 3}),
]

# oracle: (float bits, case, output of both functions, x-gradient of ..._v2 for G / GM)
EXPECTED = [
    ('32', 0,
     [-1.3015748262405396, -0.20551180839538574, 0.0, 0.3653543293476105, 2.9000000953674316,
      0.5023621916770935, -0.7535433173179626, 0.11417322605848312],
     [0.0, -0.0, 2.0, 0.0, -0.0, 0.0, 0.0, -0.0]),
    ('32', 1,
     [-1.1428571939468384, -0.1428571492433548, 0.0, 0.4285714626312256, 1.0, 0.5714285969734192,
      -0.7142857313156128, 0.1428571492433548],
     [0.0, -1.0, 2.0, 3.0, -0.0, 1.5, 0.75, -2.0]),
    ('32', 2,
     [-1.3000305891036987, -0.20001831650733948, 0.0, 0.3700338900089264, 2.9000000953674316,
      0.5099582076072693, -0.7499801516532898, 0.12496719509363174],
     [0.0, -0.0, 2.0, 0.0, -0.0, 0.0, 0.0, -0.0]),
    ('32', 3,
     [-1.2999359369277954, -0.20004883408546448, 0.0, 0.37003692984580994, 2.9000213146209717,
      0.5099642872810364, -0.7499923706054688, 0.12497329711914062],
     [0.5, -1.0, 2.0, 3.0, -0.25, 1.5, 0.75, -2.0]),
    ('32', 4,
     [-1.2964706420898438, -0.20470589399337769, 0.0, 0.37529411911964417, 2.9000000953674316,
      0.5117647051811218, -0.7505882382392883, 0.12509804964065552],
     [0.0, -0.0, 2.0, 0.0, -0.0, 0.0, 0.0, -0.0]),
    ('32', 5,
     [0.0, 0.0, 0.0, 0.40000003576278687, 2.0, 0.5333333611488342, 0.0, 0.13333334028720856],
     [0.0, -0.0, 2.0, 3.0, -0.0, 1.5, 0.0, -2.0]),
    ('32', 6,
     [-1.0, -0.19685038924217224, 0.0, 0.3700787425041199, 1.0, 0.5118110179901123,
      -0.748031497001648, 0.12598425149917603],
     [0.0, -1.0, 2.0, 3.0, -0.0, 1.5, 0.75, -2.0]),
    ('32', 7,
     [-1.2428572177886963, -0.0, 0.0, 0.41428571939468384, 2.9000000953674316, 0.41428571939468384,
      -0.8285714387893677, 0.0],
     [0.0, -0.0, 2.0, 0.0, -0.0, 0.0, 0.0, -0.0]),
    ('32', 8,
     [-1.4285714626312256, -0.2857142984867096, 0.0, 0.2857142984867096, 2.0, 0.5714285969734192,
      -0.8571429252624512, 0.0],
     [0.0, -1.0, 2.0, 3.0, -0.0, 1.5, 0.0, -2.0]),
    ('32', 9,
     [-1.4285714626312256, -0.2857142984867096, 0.0, 0.2857142984867096, 2.0, 0.5714285969734192,
      -0.8571429252624512, 0.0],
     [0.0, -1.0, 2.0, 3.0, -0.0, 1.5, 0.0, -2.0]),
    ('32', 10,
     [0.0, 2.0, -0.0, -2.0, 2.0, -2.0, 6.0, -8.0],
     [0.5, -1.0, 2.0, 3.0, -0.25, 1.5, 0.75, -2.0]),
    ('32', 11,
     [1.0, 2.0, 0.0, -1.0, 3.0, -2.0, 7.0, -7.0],
     [0.5, -1.0, 2.0, 3.0, -0.25, 1.5, 0.75, -2.0]),
    ('32', 12,
     [0.5098039507865906, 1.503921627998352, -0.5098039507865906, -1.503921627998352,
      2.4980392456054688, -2.4980392456054688, 6.5, -7.494117736816406],
     [0.0, -0.0, 0.0, 0.0, -0.0, 0.0, 0.0, -0.0]),
    ('32', 13,
     [0.0, 0.0],
     [0.5, -1.0]),
    ('32', 14,
     [-0.0, -0.0, 0.0, 0.0, 0.0, 0.0, -0.0, 0.0],
     [0.0, -0.0, 2.0, 0.0, -0.0, 0.0, 0.0, -0.0]),
    ('32', 15,
     [[-1.0, 0.3046875, 2.0, -0.437007874250412],
      [0.796875, -2.5999999046325684, 0.04724409431219101, 1.1070866584777832],
      [0.203125, 0.8937499523162842, -0.29921260476112366, 3.700000047683716]],
     [[0.0, 0.0, 0.0, 0.0], [-0.0, -0.0, -0.0, -0.0], [0.0, 0.0, -0.0, 0.0]]),
    ('32', 16,
     [[-1.0, 0.2857142984867096, 1.0, -0.4285714626312256], [0.75, -2.0, 0.0, 1.0],
      [0.0, 1.1428571939468384, -0.5714285969734192, 3.4285717010498047]],
     [[1.0, 2.0, 0.0, 4.0], [-0.0, -0.0, -3.0, -0.0], [0.5, 0.25, -0.5, 1.5]]),
    ('32', 17,
     [[-1.0007842779159546, 0.30000001192092896, 2.0, -0.4498039484024048],
      [0.800000011920929, -2.6011765003204346, 0.0470588281750679, 1.1027451753616333],
      [0.20078431069850922, 0.8999999761581421, -0.2980392277240753, 3.700000047683716]],
     [[0.0, 0.0, 0.0, 0.0], [-0.0, -0.0, -0.0, -0.0], [0.0, 0.0, -0.0, 0.0]]),
    ('32', 18,
     [[-1.0, 0.3333333432674408, 1.0, -0.3333333432674408], [0.6666666865348816, -1.0, 0.0, 1.0],
      [0.3333333432674408, 1.0, -0.3333333432674408, 1.0]],
     [[1.0, 2.0, 0.0, 4.0], [-1.0, -0.0, -3.0, -0.0], [0.5, 0.25, -0.5, 0.0]]),
    ('64', 0,
     [-1.3015748031496064, -0.20551181102362204, 0.0, 0.3653543307086614, 2.9, 0.5023622047244094,
      -0.7535433070866142, 0.11417322834645668],
     [0.0, -0.0, 2.0, 0.0, -0.0, 0.0, 0.0, -0.0]),
    ('64', 3,
     [-1.2999359111301003, -0.2000488296151616, 0.0, 0.37003692739646593, 2.9000213629566334,
      0.5099642933439131, -0.749992370372631, 0.1249732963042085],
     [0.5, -1.0, 2.0, 3.0, -0.25, 1.5, 0.75, -2.0]),
    ('64', 6,
     [-1.0, -0.19685039370078738, 0.0, 0.3700787401574803, 1.0, 0.5118110236220472,
      -0.7480314960629921, 0.12598425196850394],
     [0.0, -1.0, 2.0, 3.0, -0.0, 1.5, 0.75, -2.0]),
    ('64', 9,
     [-1.4285714285714284, -0.2857142857142857, 0.0, 0.2857142857142857, 2.0, 0.5714285714285714,
      -0.8571428571428571, 0.0],
     [0.0, -1.0, 2.0, 3.0, -0.0, 1.5, 0.0, -2.0]),
    ('64', 12,
     [0.5098039215686274, 1.503921568627451, -0.5098039215686274, -1.503921568627451,
      2.4980392156862745, -2.4980392156862745, 6.5, -7.4941176470588236],
     [0.0, -0.0, 0.0, 0.0, -0.0, 0.0, 0.0, -0.0]),
    ('64', 15,
     [[-1.0, 0.3046875, 2.0, -0.4370078740157481],
      [0.796875, -2.6, 0.047244094488188976, 1.1070866141732285],
      [0.203125, 0.89375, -0.2992125984251969, 3.7]],
     [[0.0, 0.0, 0.0, 0.0], [-0.0, -0.0, -0.0, -0.0], [0.0, 0.0, -0.0, 0.0]]),
    ('64', 18,
     [[-1.0, 0.3333333333333333, 1.0, -0.3333333333333333], [0.6666666666666666, -1.0, 0.0, 1.0],
      [0.3333333333333333, 1.0, -0.3333333333333333, 1.0]],
     [[1.0, 2.0, 0.0, 4.0], [-1.0, -0.0, -3.0, -0.0], [0.5, 0.25, -0.5, 0.0]]),
]


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def _assert_same_bits(got, want, dtype):
    got, want = np.asarray(got), np.asarray(want, dtype)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # -0.0 as TF


@pytest.mark.parametrize(("bits", "k", "want", "want_grad"), EXPECTED,
                         ids=[f"f{b}-{k}" for b, k, _, _ in EXPECTED])
def test_values_and_gradients_match_tensorflow(bits, k, want, want_grad):
    x, mn, mx, kw = CASES[k]
    dtype = tf.float32 if bits == "32" else tf.float64
    xt = tf.constant(x, dtype)
    mnt, mxt = tf.constant(mn, dtype), tf.constant(mx, dtype)
    g = tf.constant(GM if np.ndim(x) == 2 else G[:len(x)], dtype)
    y1, y2 = QDQ(xt, mnt, mxt, **kw), QDQ_V2(xt, mnt, mxt, **kw)
    assert (y1.op.type, y2.op.type) == ("QuantizeAndDequantizeV2", "QuantizeAndDequantizeV4")
    assert y1.shape == y2.shape == np.shape(x)
    g1 = tf.gradients(y1, [xt, mnt, mxt], g)
    g2 = tf.gradients(y2, [xt, mnt, mxt], g)
    assert g1[1] is None and g1[2] is None  # TensorFlow's V2 rule: the range gets none
    v1, v2, gx1, gx2, gmn, gmx = _run([y1, y2, g1[0], *g2])
    np_dtype = dtype.as_numpy_dtype
    _assert_same_bits(v1, want, np_dtype)
    _assert_same_bits(v2, want, np_dtype)
    _assert_same_bits(gx1, GM if np.ndim(x) == 2 else G[:len(x)], np_dtype)  # straight
    _assert_same_bits(gx2, want_grad, np_dtype)
    for r, got in ((mn, gmn), (mx, gmx)):
        _assert_same_bits(got, np.zeros(np.shape(r)), np_dtype)


# -- a NumPy-free reference, element by element -------------------------------------------

def _reference(x, mn, mx, signed_input=True, num_bits=8, range_given=False,
               round_mode="HALF_TO_EVEN", narrow_range=False, axis=None):
    """float64 `x` quantized and dequantized by the rule in the module docstring of
    `flowgraph.ops.quantize_dequantize_ops`, one slice at a time in Python floats."""
    x = np.asarray(x, np.float64)
    moved = np.moveaxis(x, axis, 0) if axis is not None else x.reshape(1, -1)
    mins = np.broadcast_to(np.asarray(mn, np.float64), moved.shape[:1])
    maxs = np.broadcast_to(np.asarray(mx, np.float64), moved.shape[:1])
    if signed_input:
        qmin, qmax = -(2 ** (num_bits - 1)) + int(narrow_range), 2 ** (num_bits - 1) - 1
    else:
        qmin, qmax = 0, 2 ** num_bits - 1
    out = np.empty_like(moved)
    for s, values in enumerate(moved):
        flat = values.reshape(-1)
        lo, hi = (float(mins[s]), float(maxs[s])) if range_given else (min(flat), max(flat))
        big = sys.float_info.max
        from_min = qmin / lo if qmin * lo > 0 else big
        from_max = qmax / hi if qmax * hi > 0 else big
        if from_min < from_max:
            scale, inverse = from_min, lo / qmin
            hi = qmax * inverse
        else:
            scale, inverse = from_max, hi / qmax
            lo = qmin * inverse
        res = []
        for v in flat:
            if range_given:
                v = min(max(v, lo), hi)
            with np.errstate(over="ignore"):
                v = float(np.float64(v) * scale)
            v = float(np.rint(v)) if round_mode == "HALF_TO_EVEN" else float(np.floor(v + 0.5))
            res.append(v * inverse)
        out[s] = np.reshape(res, values.shape)
    return np.moveaxis(out, 0, axis) if axis is not None else out.reshape(x.shape)


def _random_cases(n=24):
    r = np.random.RandomState(3)
    for k in range(n):
        shape = [(7,), (3, 5), (2, 3, 4)][k % 3]
        x = r.uniform(-3.0, 4.0, size=shape) * r.choice([0.1, 1.0, 10.0])
        if k % 4 == 0:  # exact halves of the scale step and values on the range's ends
            x = np.round(x * 2) / 2
        axis = None if k % 2 else (k // 2) % len(shape)
        size = 1 if axis is None else shape[axis]
        lo = -r.uniform(0.0, 3.0, size=size)
        hi = r.uniform(0.5, 3.0, size=size)
        if k % 5 == 0:
            lo = np.zeros(size)
        kw = {"signed_input": bool(k % 3), "num_bits": [2, 4, 8, 13, 16][k % 5],
              "range_given": k % 4 < 2, "round_mode": ["HALF_TO_EVEN", "HALF_UP"][(k // 3) % 2],
              "narrow_range": k % 7 < 3, "axis": axis}
        if axis is None:
            lo, hi = lo[0], hi[0]
        yield pytest.param(x, lo, hi, kw, id=f"case{k}")


@pytest.mark.parametrize(("x", "lo", "hi", "kw"), list(_random_cases()))
def test_matches_the_reference(x, lo, hi, kw):
    y = _run(QDQ_V2(tf.constant(x), tf.constant(lo), tf.constant(hi), **kw))
    np.testing.assert_array_equal(y, _reference(x, lo, hi, **kw))


def test_v4_gradient_masks_with_the_range_as_given():
    """Without range_given the mask still uses input_min/input_max as passed (oracle)."""
    x = tf.constant([-1.3, -0.2, 0.0, 0.37, 2.9, 0.51])
    y = QDQ_V2(x, 0.0, 0.5, range_given=False)
    assert _run(tf.gradients(y, x)[0]).tolist() == [0.0, 0.0, 1.0, 1.0, 0.0, 0.0]


def test_second_order_gradient_is_the_mask_again():
    x = tf.constant([-2.0, 0.3, 0.9])
    g = tf.constant([1.0, 2.0, 3.0])
    gx = tf.gradients(QDQ_V2(x, -1.0, 0.5, range_given=True), x, g)[0]
    assert gx.op.type == "QuantizeAndDequantizeV4Grad"
    ggx = tf.gradients(gx, g, tf.constant([5.0, 6.0, 7.0]))[0]
    assert _run(ggx).tolist() == [0.0, 6.0, 0.0]
    assert tf.gradients(gx, x) == [None]


# -- shapes, arguments and errors ------------------------------------------------------------

def test_shapes_are_inferred_without_data():
    p = tf.placeholder(tf.float32, [None, 4])
    y = QDQ(p, tf.placeholder(tf.float32), tf.placeholder(tf.float32), axis=1)
    assert y.shape.as_list() == [None, 4] and y.op.get_attr("axis") == 1
    y = QDQ_V2(tf.zeros([2, 3]), [0.0, 1.0, 2.0], [1.0, 2.0, 3.0], axis=-1)
    assert y.op.get_attr("axis") == 1  # a negative axis counted from the end, as TF
    gx, gmn, gmx = tf.gradients(y, [y.op.inputs[0]])[0].op.outputs
    assert [t.shape.as_list() for t in (gx, gmn, gmx)] == [[2, 3], [3], [3]]
    assert QDQ(tf.placeholder(tf.float32), 0.0, 1.0).shape.ndims is None


def test_defaults_and_attributes_are_tensorflows():
    y = QDQ([1.0, 2.0], 0.0, 1.0)
    attrs = {k: y.op.get_attr(k) for k in ("signed_input", "num_bits", "range_given",
                                           "round_mode", "narrow_range", "axis")}
    assert attrs == {"signed_input": True, "num_bits": 8, "range_given": False,
                     "round_mode": b"HALF_TO_EVEN", "narrow_range": False, "axis": -1}
    assert y.op.get_attr("T") == tf.float32
    assert QDQ_V2([1.0], 0.0, 1.0, name="qd").op.name == "qd"
    assert not hasattr(tf, "quantize_and_dequantize")  # not in TF 2.15's compat.v1 either


@pytest.mark.parametrize(("build", "error", "match"), [
    (lambda: QDQ([1.0], 0.0, 1.0, round_mode="HALF_AWAY"), ValueError,
     "not in: \"HALF_TO_EVEN\", \"HALF_UP\""),
    (lambda: QDQ(tf.constant([1, 2]), 0, 1), TypeError, "DataType int32 not in list"),
    (lambda: QDQ([1.0, 2.0], [0.0], [1.0], axis=1), ValueError, "rank at least 2"),
    (lambda: QDQ([1.0, 2.0], [0.0, 1.0], [1.0, 2.0]), ValueError, "must have rank 0"),
    (lambda: QDQ(tf.zeros([2, 3]), [0.0, 1.0], [1.0, 2.0], axis=1), ValueError,
     "have 2 values but the input has 3 slices"),
    (lambda: QDQ(tf.placeholder(tf.float32), [0.0], [1.0], axis=-1), ValueError,
     "known rank to use negative axis"),
])
def test_graph_time_errors(build, error, match):
    with pytest.raises(error, match=match):
        build()


@pytest.mark.parametrize(("build", "match"), [
    (lambda: QDQ([-1.3, 0.2], 1.0, -1.0, range_given=True), "Invalid range: input_min"),
    (lambda: QDQ([1.0], -1.0, 1.0, num_bits=0), "num_bits is out of range: 0"),
    (lambda: QDQ_V2([1.0], -1.0, 1.0, num_bits=62), "num_bits is out of range: 62"),
    (lambda: QDQ(tf.constant([1.0], tf.float16), -1.0, 1.0), "No kernel"),  # none in TF
])
def test_run_time_errors(build, match):
    y = build()
    with pytest.raises(errors.InvalidArgumentError, match=match):
        _run(y)


def test_a_range_below_its_minimum_is_ignored_unless_given():
    assert _run(QDQ([-1.3, 0.2, 0.7], 1.0, -1.0)).tolist() == pytest.approx(
        [-1.2999999523162842, 0.203125, 0.7007812261581421], abs=0)  # oracle
    assert _run(QDQ_V2([-1.3, 0.2, 0.7], -1.0, 1.0, num_bits=62, signed_input=False)
                ).tolist() == pytest.approx([-1.3, 0.2, 0.7], rel=1e-7)  # oracle


def test_module_examples_run():
    from module_examples import assert_examples_pass

    assert_examples_pass("flowgraph.ops.quantize_dequantize_ops")
    assert_examples_pass("flowgraph.ops.quantization_namespace")


def test_degenerate_ranges_follow_tensorflow():
    """Unsigned with negative values: TensorFlow's arithmetic, overflow included (oracle)."""
    y = QDQ_V2(tf.constant([-0.5, -2.0]), 0.0, 0.0, signed_input=False)
    assert _run(y).tolist() == [3.336101437632636e+35, float("inf")]
    y = QDQ_V2(tf.constant([[-0.5, 1.0], [-2.0, 3.0]]), [0.0, 0.0], [0.0, 0.0],
               signed_input=False, axis=0)
    assert _run(y).tolist() == [[-0.501960813999176, 1.0], [-2.0, 3.0]]
    y = QDQ_V2(tf.constant([-0.5, -2.0], tf.float64), -1.0, -0.5, signed_input=False,
               range_given=True)
    assert _run(y).tolist() == [0.0, 0.0]
    assert _run(QDQ_V2(tf.zeros([0, 3]), [0.0] * 3, [0.0] * 3, axis=1)).shape == (0, 3)
