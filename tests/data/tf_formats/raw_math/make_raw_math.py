"""Generate the raw_math GraphDef fixtures under TensorFlow (run it with the tf-oracle's
Python: ``/tmp/tf-oracle-venv/bin/python tests/data/tf_formats/raw_math/make_raw_math.py``).

``graph.pb`` / ``expected.npz``: a graph of the math, array and linear-algebra op types,
built with TensorFlow 2.15's public TF1 API where that API emits the op type (`tf.eye` ->
``MatrixDiagV3``/``MatrixSetDiagV3``, `tf.linalg.diag_part` -> ``MatrixDiagPartV3``,
`tf.signal.rfft` -> ``RFFT``, `tf.math.cumulative_logsumexp`, `tf.ensure_shape`,
`tf.parallel_stack`, `tf.histogram_fixed_width`, `tf.matmul(a_is_sparse=True)` ->
``SparseMatMul``, ...) and with ``tf.raw_ops`` elsewhere, fed one matrix ``x``.

``old_graph.pb`` / ``old_expected.npz``: the names graphs written before TensorFlow 0.7
use (``BatchCholesky``, ``BatchMatrixDiag``, ``BatchSvd``, ``BatchFFT``, ``TopK`` with its
``k`` attribute, ``TileGrad``, ``SelfAdjointEig``, ``PlaceholderV2``, ...). TensorFlow 2.15
no longer builds them, so the script builds their current forms, renames the nodes in the
GraphDef and marks it as written by producer version 2, which TensorFlow still imports and
runs (the expected values are TensorFlow's run of that old GraphDef).
"""

import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
HERE = os.path.dirname(os.path.abspath(__file__))
R = np.random.RandomState(15)
RAW = tf.raw_ops


def build():
    x = tf.placeholder(tf.float32, [3, 4], name="x")
    out = {}
    # diagonals (TF 2.x public API)
    out["eye_rect"] = tf.eye(3, 4, name="eye_rect") * x
    out["eye_sq"] = tf.eye(3, batch_shape=[2], name="eye_sq")
    out["diag_part"] = tf.linalg.diag_part(x, k=(-1, 2), padding_value=9.0, name="diag_part")
    out["diag"] = tf.linalg.diag(x[:, :3], k=(-1, 1), name="diag")
    out["set_diag"] = tf.linalg.set_diag(x, x[:2, :3] * 10.0, k=(0, 1), name="set_diag")
    out["trace"] = tf.linalg.trace(x[:, :3], name="trace")
    out["diag_v2"] = RAW.MatrixDiagV2(diagonal=x[:2], k=[0, 1], num_rows=-1, num_cols=-1,
                                      padding_value=0.5, name="diag_v2")
    out["part_v2"] = RAW.MatrixDiagPartV2(input=x, k=[-2, 0], padding_value=-1.0,
                                          name="part_v2")
    out["set_v2"] = RAW.MatrixSetDiagV2(input=x, diagonal=x[1:3, :3] + 5.0, k=[-1, 0],
                                        name="set_v2")
    # real FFTs
    out["rfft"] = tf.signal.rfft(x, name="rfft")
    out["irfft"] = tf.signal.irfft(tf.signal.rfft(x), [4], name="irfft")
    out["rfft2d"] = tf.signal.rfft2d(x, fft_length=[3, 6], name="rfft2d")
    out["irfft2d"] = tf.signal.irfft2d(tf.signal.rfft2d(x), name="irfft2d")
    # math
    out["cumlse"] = tf.math.cumulative_logsumexp(x, axis=1, exclusive=True, name="cumlse")
    out["eucl"] = tf.math.reduce_euclidean_norm(x, 0, name="eucl")
    out["mul_no_nan"] = tf.math.multiply_no_nan(x / 0.0, tf.floor(x), name="mul_no_nan")
    out["hist"] = tf.histogram_fixed_width(x, [-1.0, 1.0], nbins=4, name="hist")
    xi = tf.cast(x * 10.0, tf.int32)
    out["div"] = RAW.Div(x=xi, y=tf.constant([3, -3, 4, -4]), name="div")
    out["mod"] = RAW.Mod(x=xi, y=tf.constant([3, -3, 4, -4]), name="mod")
    out["inv"] = RAW.Inv(x=x + 2.0, name="inv")
    out["inv_grad"] = RAW.InvGrad(y=x, dy=x + 1.0, name="inv_grad")
    out["approx_eq"] = RAW.ApproximateEqual(x=x, y=x * 1.1, tolerance=0.05, name="approx_eq")
    out["clip"] = RAW.ClipByValue(t=x, clip_value_min=-0.2, clip_value_max=0.3, name="clip")
    out["acc_n"] = RAW.AccumulateNV2(inputs=[x, x * 2.0, x], shape=[3, 4], name="acc_n")
    out["bias_v1"] = RAW.BiasAddV1(value=x, bias=[1.0, 2.0, 3.0, 4.0], name="bias_v1")
    out["popcount"] = RAW.PopulationCount(x=xi, name="popcount")
    out["igamma_grad_a"] = RAW.IgammaGradA(a=tf.abs(x) + 0.5, x=tf.abs(x) + 1.0,
                                           name="igamma_grad_a")
    # array
    out["concat"] = RAW.Concat(concat_dim=1, values=[x, x * 2.0], name="concat")
    out["reverse"] = RAW.Reverse(tensor=x, dims=[True, False], name="reverse")
    out["nth"] = RAW.NthElement(input=x, n=2, reverse=True, name="nth")
    out["in_top_k"] = RAW.InTopK(predictions=x, targets=[0, 1, 3], k=2, name="in_top_k")
    approx = tf.math.approx_max_k(x, 2, name="approx_max_k")
    out["approx_v"], out["approx_i"] = approx[0], approx[1]
    uv = RAW.UniqueV2(x=tf.constant([[1, 0], [1, 0], [2, 3]]), axis=[0], name="unique_v2")
    out["unique_y"], out["unique_idx"] = uv
    uwc = RAW.UniqueWithCountsV2(x=tf.constant([3, 1, 3, 3]), axis=tf.zeros([0], tf.int64),
                                 name="unique_wc_v2")
    out["uwc_y"], out["uwc_idx"], out["uwc_count"] = uwc
    out["empty"] = RAW.Empty(shape=[2, 0], dtype=tf.float32, init=True, name="empty")
    out["ensure"] = tf.ensure_shape(x, [3, None], name="ensure")
    # TensorFlow's Inplace* kernels write into their input's buffer: each gets its own copy
    out["inplace_add"] = RAW.InplaceAdd(x=RAW.DeepCopy(x=x), i=[2], v=x[:1],
                                        name="inplace_add")
    out["inplace_sub"] = RAW.InplaceSub(x=RAW.DeepCopy(x=x), i=[0, 1], v=x[1:],
                                        name="inplace_sub")
    out["inplace_update"] = RAW.InplaceUpdate(x=RAW.DeepCopy(x=x), i=[1], v=x[:1] * 0.0,
                                              name="inplace_update")
    out["par_stack"] = tf.parallel_stack([x[0], x[1]], name="par_stack")
    out["prevent"] = RAW.PreventGradient(input=x, message="no", name="prevent")
    out["guarantee"] = tf.guarantee_const(x, name="guarantee")
    out["check_v2"] = RAW.CheckNumericsV2(tensor=x, message="x", name="check_v2")
    out["debug_id"] = RAW.DebugGradientIdentity(input=x, name="debug_id")
    out["snapshot"] = RAW.Snapshot(input=x, name="snapshot")
    out["deep_copy"] = RAW.DeepCopy(x=x, name="deep_copy")
    # linear algebra
    sq = tf.matmul(x, x, transpose_b=True) + 3.0 * tf.eye(3)
    out["solve_ls"] = tf.matrix_solve_ls(x, x[:, :2], fast=False, name="solve_ls")
    out["solve_ls_fast"] = RAW.MatrixSolveLs(matrix=x, rhs=x[:, :1], l2_regularizer=0.1,
                                             fast=True, name="solve_ls_fast")
    eig = RAW.Eig(input=tf.linalg.band_part(sq, 0, -1), Tout=tf.complex64, compute_v=False,
                  name="eig")
    out["eig"] = eig[0]
    out["banded"] = RAW.BandedTriangularSolve(matrix=x[:2, :3] + 2.0, rhs=x[:, :2],
                                              name="banded")
    chol = tf.linalg.cholesky(sq)
    out["chol_grad"] = RAW.CholeskyGrad(l=chol, grad=sq, name="chol_grad")
    out["bmm_v3"] = tf.matmul(tf.cast(xi, tf.int8), tf.cast(xi, tf.int8), transpose_b=True,
                              output_type=tf.int32, name="bmm_v3")
    out["sparse_mm"] = tf.matmul(x, x, transpose_b=True, a_is_sparse=True, name="sparse_mm")
    return x, out


def build_old():
    """Current forms of the pre-0.7 ops; `OLD_NAMES` renames them in the GraphDef."""
    x = tf.placeholder(tf.float32, [2, 3, 3], name="x")
    sq = tf.matmul(x, x, transpose_b=True) + 3.0 * tf.eye(3, batch_shape=[2])
    chol = tf.raw_ops.Cholesky(input=sq, name="chol")
    out = {
        "chol": chol,
        "chol_grad": RAW.CholeskyGrad(l=chol, grad=x, name="chol_grad"),
        "band": RAW.MatrixBandPart(input=x, num_lower=np.int64(0), num_upper=np.int64(1),
                                   name="band"),
        "det": RAW.MatrixDeterminant(input=sq, name="det"),
        "diag": RAW.MatrixDiag(diagonal=x[:, 0], name="diag"),
        "diag_part": RAW.MatrixDiagPart(input=x, name="diag_part"),
        "inv": RAW.MatrixInverse(input=sq, name="inv"),
        "set_diag": RAW.MatrixSetDiag(input=x, diagonal=x[:, 1], name="set_diag"),
        "solve": RAW.MatrixSolve(matrix=sq, rhs=x, name="solve"),
        "solve_ls": RAW.MatrixSolveLs(matrix=sq, rhs=x, l2_regularizer=0.0, name="solve_ls"),
        "tri_solve": RAW.MatrixTriangularSolve(matrix=chol, rhs=x, name="tri_solve"),
        "eig_v2": RAW.SelfAdjointEigV2(input=sq, name="eig_v2")[0],
        "svd": RAW.Svd(input=x, compute_uv=False, name="svd")[0],
        "fft": RAW.FFT(input=tf.complex(x, x), name="fft"),
        "ifft2d": RAW.IFFT2D(input=tf.complex(x, -x), name="ifft2d"),
        "fft3d": RAW.FFT3D(input=tf.complex(x, 0.5 * x), name="fft3d"),
        "top_k": RAW.TopKV2(input=x, k=2, name="top_k")[0],
        "tile_grad": tf.identity(x, name="tile_grad"),  # replaced by TileGrad below
        "fed": tf.placeholder(tf.float32, [None, 3], name="fed") * 2.0,
    }
    return x, out


# op type in the current graph -> the pre-0.7 name (by node name)
OLD_NAMES = {"chol": "BatchCholesky", "chol_grad": "BatchCholeskyGrad",
             "band": "BatchMatrixBandPart", "det": "BatchMatrixDeterminant",
             "diag": "BatchMatrixDiag", "diag_part": "BatchMatrixDiagPart",
             "inv": "BatchMatrixInverse", "set_diag": "BatchMatrixSetDiag",
             "solve": "BatchMatrixSolve", "solve_ls": "BatchMatrixSolveLs",
             "tri_solve": "BatchMatrixTriangularSolve", "eig_v2": "BatchSelfAdjointEigV2",
             "svd": "BatchSvd", "fft": "BatchFFT", "ifft2d": "BatchIFFT2D",
             "fft3d": "BatchFFT3D", "top_k": "TopK", "fed": "PlaceholderV2"}


def _old_graph_def(graph):
    gd = graph.as_graph_def()
    for node in gd.node:
        if node.name in OLD_NAMES:
            node.op = OLD_NAMES[node.name]
        if node.name == "top_k":  # TopK: k is an attribute, not an input
            del node.input[1]
            node.attr["k"].i = 2
        if node.name == "tile_grad":  # TileGrad(x, multiples=[1, 1, 3]) of a [2, 3, 3] x
            node.op = "TileGrad"
            node.input.append("tile_grad_multiples")
    mult = gd.node.add()
    mult.name = "tile_grad_multiples"
    mult.op = "Const"
    mult.attr["dtype"].type = tf.int32.as_datatype_enum
    mult.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(np.array([1, 1, 3], np.int32)))
    gd.versions.producer = 2
    gd.versions.min_consumer = 0
    return gd


def _run(gd, feeds, fetch_names):
    with tf.Graph().as_default() as g:
        tf.import_graph_def(gd, name="")
        with tf.Session(graph=g) as sess:
            return sess.run([f"{n}:0" for n in fetch_names],
                            {f"{k}:0": v for k, v in feeds.items()})


def main():
    feed = R.uniform(-1.0, 1.0, (3, 4)).astype(np.float32)
    with tf.Graph().as_default() as g:
        _, out = build()
        names = {k: v.name.split(":")[0] for k, v in out.items()}
        assert all(v.name.endswith(":0") for k, v in out.items() if not k.startswith(
            ("approx_i", "unique_idx", "uwc_idx", "uwc_count")))
        fetch = {k: v.name for k, v in out.items()}
        with tf.Session(graph=g) as sess:
            values = sess.run(fetch, {"x:0": feed})
        gd = g.as_graph_def()
    with open(os.path.join(HERE, "graph.pb"), "wb") as f:
        f.write(gd.SerializeToString())
    np.savez(os.path.join(HERE, "expected.npz"), x=feed, **{
        f"out__{k}__{fetch[k]}": np.asarray(v) for k, v in values.items()})
    del names

    old_feed = R.uniform(-1.0, 1.0, (2, 3, 3)).astype(np.float32)
    fed = R.uniform(-1.0, 1.0, (2, 3)).astype(np.float32)
    with tf.Graph().as_default() as g:
        _, out = build_old()
        fetch = {k: v.name.split(":")[0] for k, v in out.items()}
        gd = _old_graph_def(g)
    # TensorFlow 2.15 has no kernels for the Batch*FFT* names any more: their expected
    # values are those of the current ops (FFT, IFFT2D, FFT3D) in the unrenamed graph.
    current = [k for k in fetch if OLD_NAMES.get(k, "").startswith(("BatchFFT", "BatchIFFT"))]
    with tf.Graph().as_default() as g:
        build_old()
        now = _run(g.as_graph_def(), {"x": old_feed, "fed": fed}, [fetch[k] for k in current])
    rest = [k for k in fetch if k not in current]
    runnable = tf.GraphDef()
    runnable.CopyFrom(gd)
    for node in runnable.node:  # TensorFlow places every node: keep the FFTs current
        if node.op.startswith(("BatchFFT", "BatchIFFT")):
            node.op = node.op[len("Batch"):]
        if node.op == "TileGrad":  # its CPU kernel never matches its OpDef: Sum instead
            node.op = "Sum"
            node.input[1] = "tile_grad_axis"
            node.attr["keep_dims"].b = True
            node.attr["Tidx"].type = tf.int32.as_datatype_enum
    axis = runnable.node.add()
    axis.name = "tile_grad_axis"
    axis.op = "Const"
    axis.attr["dtype"].type = tf.int32.as_datatype_enum
    axis.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(np.array([2], np.int32)))
    values = dict(zip(rest, _run(runnable, {"x": old_feed, "fed": fed},
                                 [fetch[k] for k in rest])))
    values.update(zip(current, now))
    values = [values[k] for k in fetch]
    with open(os.path.join(HERE, "old_graph.pb"), "wb") as f:
        f.write(gd.SerializeToString())
    np.savez(os.path.join(HERE, "old_expected.npz"), x=old_feed, fed=fed, **{
        f"out__{k}__{fetch[k]}:0": np.asarray(v) for k, v in zip(fetch, values)})


if __name__ == "__main__":
    main()
