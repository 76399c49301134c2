"""Three known fidelity gaps, each settled against TensorFlow 2.15 (tf.compat.v1, graph
mode); TF's values are inline.

1. Keras models nested in models: variable names, `get_weight_paths`, `save_weights` /
   `load_weights` (HDF5 group layout, TensorFlow checkpoint keys, files TF wrote and
   files flowgraph wrote read in a fresh process), `summary` (``Functional``,
   ``expand_nested``, ``show_trainable``) and `get_layer`.
2. ``Graph.as_graph_def(add_shapes=True)``'s ``_output_shapes`` and how an import reads
   and checks it.
3. ``tf.raw_ops.ParseExample`` (V1) with TensorFlow's inputs, attributes and output
   grouping.
"""

import os
import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest

import flowgraph as tf

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "data", "keras_nested")
sys.path.insert(0, FIXTURES)
from make_fixtures import NAMES, build  # noqa: E402  (the TF fixtures' own model code)

K = tf.keras
_VALUE = "/.ATTRIBUTES/VARIABLE_VALUE"


def _lw(*parts) -> str:
    return "/".join(f"layer_with_weights-{p}" if isinstance(p, int) else p
                    for p in parts) + _VALUE


def _ckpt_keys(prefix) -> list:
    return sorted(k for k, _ in tf.train.list_variables(prefix))


# -- 1. nested Keras models -------------------------------------------------------------------
TF_PATHS = {
    "seq_in_fn": ["head.bias", "head.kernel", "inner_seq.layer_with_weights-0.bias",
                  "inner_seq.layer_with_weights-0.kernel",
                  "inner_seq.layer_with_weights-1.bias",
                  "inner_seq.layer_with_weights-1.kernel"],
    "fn_in_seq": ["inner_fn.layer_with_weights-0.bias", "inner_fn.layer_with_weights-0.kernel",
                  "inner_fn.layer_with_weights-1.bias", "inner_fn.layer_with_weights-1.kernel",
                  "top.bias", "top.kernel"],
    "sub_in_fn": ["h3.bias", "h3.kernel", "sub.bn.beta", "sub.bn.gamma", "sub.bn.moving_mean",
                  "sub.bn.moving_variance", "sub.d1.bias", "sub.d1.kernel", "sub.d2.bias",
                  "sub.d2.kernel"],
    "two_levels": ["h4.bias", "h4.kernel",
                   "lvl1.layer_with_weights-0.layer_with_weights-0.bias",
                   "lvl1.layer_with_weights-0.layer_with_weights-0.kernel",
                   "lvl1.layer_with_weights-0.layer_with_weights-1.beta",
                   "lvl1.layer_with_weights-0.layer_with_weights-1.gamma",
                   "lvl1.layer_with_weights-0.layer_with_weights-1.moving_mean",
                   "lvl1.layer_with_weights-0.layer_with_weights-1.moving_variance",
                   "lvl1.layer_with_weights-1.bias", "lvl1.layer_with_weights-1.kernel"],
}
TF_WEIGHTS = {
    "seq_in_fn": ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0",
                  "head/kernel:0", "head/bias:0"],
    "fn_in_seq": ["fd/kernel:0", "fd/bias:0", "fo/kernel:0", "fo/bias:0", "top/kernel:0",
                  "top/bias:0"],
    "sub_in_fn": ["sub/dense_2/kernel:0", "sub/dense_2/bias:0",
                  "sub/batch_normalization/gamma:0", "sub/batch_normalization/beta:0",
                  "sub/batch_normalization/moving_mean:0",
                  "sub/batch_normalization/moving_variance:0", "sub/dense_3/kernel:0",
                  "sub/dense_3/bias:0", "h3/kernel:0", "h3/bias:0"],
    "two_levels": ["a1/kernel:0", "a1/bias:0", "abn/gamma:0", "abn/beta:0",
                   "abn/moving_mean:0", "abn/moving_variance:0", "b1/kernel:0", "b1/bias:0",
                   "h4/kernel:0", "h4/bias:0"],
}
# the summary row of the nested model (name, class, output shape, parameters)
TF_ROW = {"seq_in_fn": ("inner_seq (Sequential)", "(None, 2)", "26"),
          "fn_in_seq": ("inner_fn (Functional)", "(None, 2)", "32"),
          "sub_in_fn": ("sub (Sub)", "(None, 2)", "42"),
          "two_levels": ("lvl1 (Sequential)", "(None, 2)", "32")}


def _build_all():
    """The four fixture models in one graph, built in order (as TF numbered them)."""
    models = {}
    for name in NAMES:
        models[name] = build(tf, name)
    return models


def test_nested_weight_names_paths_summary_and_get_layer():
    with tf.Graph().as_default():
        models = _build_all()
        for name, m in models.items():
            assert [w.name for w in m.weights] == TF_WEIGHTS[name], name
            assert sorted(m.get_weight_paths()) == TF_PATHS[name], name
            lines = []
            m.summary(line_length=90, print_fn=lines.append)
            row = next(line for line in lines if line.startswith(f" {TF_ROW[name][0]}"))
            assert row.split() == " ".join(TF_ROW[name]).split(), (name, row)
        m4 = models["two_levels"]
        inner = m4.get_layer("lvl1")
        assert inner.get_layer("lvl2").get_layer("a1").name == "a1"
        assert [la.name for la in m4.layers] == ["x", "lvl1", "h4"]
        with pytest.raises(ValueError, match=r"No such layer: a1\. Existing layers are: "
                                             r"\['x', 'lvl1', 'h4'\]"):
            m4.get_layer("a1")
        assert {v.name for v in tf.global_variables()} >= set(TF_WEIGHTS["two_levels"])


def test_nested_checkpoint_keys_and_h5_layout(tmp_path):
    with tf.Graph().as_default():
        models = _build_all()
        m1, m3, m4 = models["seq_in_fn"], models["sub_in_fn"], models["two_levels"]
        m1.save_weights(str(tmp_path / "m1"))
        assert _ckpt_keys(str(tmp_path / "m1")) == sorted([
            "_CHECKPOINTABLE_OBJECT_GRAPH", _lw(0, 0, "bias"), _lw(0, 0, "kernel"),
            _lw(0, 1, "bias"), _lw(0, 1, "kernel"), _lw(1, "bias"), _lw(1, "kernel")])
        m3.save_weights(str(tmp_path / "m3"))
        assert _ckpt_keys(str(tmp_path / "m3")) == sorted(
            ["_CHECKPOINTABLE_OBJECT_GRAPH", _lw(1, "bias"), _lw(1, "kernel")]
            + [_lw(0, f"bn/{w}") for w in ("beta", "gamma", "moving_mean", "moving_variance")]
            + [_lw(0, f"{d}/{w}") for d in ("d1", "d2") for w in ("bias", "kernel")])
        m4.save_weights(str(tmp_path / "m4"))
        assert _lw(0, 0, 1, "moving_variance") in _ckpt_keys(str(tmp_path / "m4"))
        # HDF5: a nested model is one group; its weights trainable first (Keras's order)
        m3.save_weights(str(tmp_path / "m3.h5"))
        with h5py.File(tmp_path / "m3.h5", "r") as f:
            names = [n.decode() if isinstance(n, bytes) else n
                     for n in f["sub"].attrs["weight_names"]]
            assert names == [
                "sub/dense_2/kernel:0", "sub/dense_2/bias:0",
                "sub/batch_normalization/gamma:0", "sub/batch_normalization/beta:0",
                "sub/dense_3/kernel:0", "sub/dense_3/bias:0",
                "sub/batch_normalization/moving_mean:0",
                "sub/batch_normalization/moving_variance:0"]
            assert "sub/sub/batch_normalization/moving_mean:0" in f
            assert [n.decode() if isinstance(n, bytes) else n
                    for n in f.attrs["layer_names"]] == ["x", "sub", "h3"]


@pytest.mark.parametrize("name", NAMES)
def test_tf_written_nested_weights_load(name):
    """TF 2.15 trained each model two epochs and saved HDF5 and checkpoint weights
    (tests/data/keras_nested/make_fixtures.py); both load into flowgraph's model and
    predict TF's numbers, and a checkpoint flowgraph writes after training has TF's keys
    (optimizer slots included)."""
    expected = np.load(os.path.join(FIXTURES, "expected.npz"))
    x = expected["x"]
    for path in (f"{name}.h5", f"{name}_ckpt"):
        with tf.Graph().as_default():
            tf.set_random_seed(7)
            m = build(tf, name)
            m.compile(K.optimizers.Adam(0.05), "mse")
            m.load_weights(os.path.join(FIXTURES, path))
            np.testing.assert_allclose(m.predict(x), expected[f"{name}/y"], rtol=1e-5,
                                       atol=1e-6)
    with tf.Graph().as_default():
        m = build(tf, name)
        m.compile(K.optimizers.Adam(0.05), "mse")
        m.fit(x, x[:, :1], epochs=1, batch_size=4, verbose=0)
        prefix = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"fg_s20_{os.getpid()}_{name}")
        m.save_weights(prefix)
        mine = dict(tf.train.list_variables(prefix))
        theirs = dict(tf.train.list_variables(os.path.join(FIXTURES, f"{name}_ckpt")))
        assert mine == theirs


def test_flowgraph_written_nested_weights_load_in_fresh_process(tmp_path):
    x = np.random.RandomState(1).rand(5, 3).astype(np.float32)
    want = {}
    with tf.Graph().as_default():
        tf.set_random_seed(11)
        for name in ("sub_in_fn", "two_levels"):
            m = build(tf, name)
            m.compile(K.optimizers.Adam(0.05), "mse")
            m.fit(x, x[:, :1], epochs=2, batch_size=5, verbose=0)
            m.save_weights(str(tmp_path / f"{name}.h5"))
            m.save_weights(str(tmp_path / f"{name}_ckpt"))
            want[name] = m.predict(x)
    np.save(tmp_path / "x.npy", x)
    script = textwrap.dedent(f"""
        import sys, numpy as np
        sys.path.insert(0, {FIXTURES!r})
        import flowgraph as tf
        from make_fixtures import build
        x = np.load({str(tmp_path / 'x.npy')!r})
        for name in ("sub_in_fn", "two_levels"):
            for suffix in (".h5", "_ckpt"):
                with tf.Graph().as_default():
                    m = build(tf, name)
                    m.load_weights({str(tmp_path)!r} + "/" + name + suffix)
                    np.save({str(tmp_path)!r} + "/" + name + suffix + ".npy", m.predict(x))
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    for name in ("sub_in_fn", "two_levels"):
        for suffix in (".h5", "_ckpt"):
            got = np.load(tmp_path / f"{name}{suffix}.npy")
            np.testing.assert_allclose(got, want[name], rtol=1e-6, atol=1e-7)


def test_subclassed_model_paths_keys_and_nested_sequential_names(tmp_path):
    class Top(K.Model):
        def __init__(self):
            super().__init__(name="top_sub")
            self.blocks = [K.layers.Dense(3, name="b0"), K.layers.Dense(3, name="b1")]
            self.inner = K.Sequential([K.layers.Dense(2, name="in_d")], name="in_seq")
            self.out = K.layers.Dense(1, name="o")

        def call(self, x):
            for b in self.blocks:
                x = b(x)
            return self.out(self.inner(x))

    with tf.Graph().as_default():
        t = Top()
        t(tf.zeros((2, 4)))
        assert [w.name for w in t.weights] == [
            "top_sub/b0/kernel:0", "top_sub/b0/bias:0", "top_sub/b1/kernel:0",
            "top_sub/b1/bias:0", "top_sub/in_seq/in_d/kernel:0", "top_sub/in_seq/in_d/bias:0",
            "top_sub/o/kernel:0", "top_sub/o/bias:0"]
        assert sorted(t.get_weight_paths()) == [
            "blocks.0.bias", "blocks.0.kernel", "blocks.1.bias", "blocks.1.kernel",
            "inner.layer_with_weights-0.bias", "inner.layer_with_weights-0.kernel",
            "out.bias", "out.kernel"]
        t.save_weights(str(tmp_path / "t"))
        assert _ckpt_keys(str(tmp_path / "t")) == [
            "_CHECKPOINTABLE_OBJECT_GRAPH", "blocks/0/bias" + _VALUE, "blocks/0/kernel" + _VALUE,
            "blocks/1/bias" + _VALUE, "blocks/1/kernel" + _VALUE, _lw("inner", 0, "bias"),
            _lw("inner", 0, "kernel"), "out/bias" + _VALUE, "out/kernel" + _VALUE]


def test_sequential_built_by_its_first_call_names_weights_in_its_scope():
    with tf.Graph().as_default():
        s = K.Sequential([K.layers.Dense(2, name="d")], name="seq")
        y = s(tf.zeros((2, 3)))
        assert [w.name for w in s.weights] == ["seq/d/kernel:0", "seq/d/bias:0"]
        assert y.name == "seq/d/BiasAdd:0"
        with tf.name_scope("outer"):
            s2 = K.Sequential([K.layers.Dense(2, name="d2")], name="seq2")
            y2 = s2(tf.zeros((2, 3)))
        assert [w.name for w in s2.weights] == ["outer/seq2/d2/kernel:0",
                                                "outer/seq2/d2/bias:0"]
        assert y2.name == "outer/seq2/d2/BiasAdd:0"
        x = K.Input((4,))
        s5 = K.Sequential([K.layers.Dense(2, name="e")], name="seq5")
        m5 = K.Model(x, s5(x))
        assert [w.name for w in m5.weights] == ["seq5/e/kernel:0", "seq5/e/bias:0"]


def test_summary_expand_nested_and_show_trainable():
    with tf.Graph().as_default():
        inner = K.Sequential([K.layers.Dense(4, input_shape=(3,), name="i1"),
                              K.layers.BatchNormalization(name="ibn"),
                              K.layers.Dense(2, name="i2")], name="inner")
        x = K.Input((3,), name="x")
        m = K.Model(x, K.layers.Dense(1, name="h")(inner(x)))
        inner.layers[0].trainable = False
        lines = []
        m.summary(line_length=70, expand_nested=True, print_fn=lines.append)
        bar = "\u00af"
        assert lines[6:15] == [
            " inner (Sequential)            (None, 2)                   42         ",
            "|" + bar * 68 + "|",
            "| i1 (Dense)                   (None, 4)                   16        |",
            "|" + " " * 68 + "|",
            "| ibn (BatchNormalization)     (None, 4)                   16        |",
            "|" + " " * 68 + "|",
            "| i2 (Dense)                   (None, 2)                   10        |",
            bar * 70,
            " h (Dense)                     (None, 1)                   3          "]
        assert lines[-3:-1] == ["Trainable params: 21 (84.00 Byte)",
                                "Non-trainable params: 24 (96.00 Byte)"]
        lines = []
        m.summary(line_length=80, show_trainable=True, print_fn=lines.append)
        assert lines[2] == " Layer (type)" + " " * 23 + "Output Shape" + " " * 20 + \
            "Param #     Trainable  "
        assert lines[6] == " inner (Sequential)" + " " * 17 + "(None, 2)" + " " * 23 + \
            "42          Y          "
        assert len(lines[1]) == 91


# -- 2. _output_shapes -----------------------------------------------------------------------
def _shapes_of(node):
    if "_output_shapes" not in node.attr:
        return None
    return ["?" if s.unknown_rank else [d.size for d in s.dim]
            for s in node.attr["_output_shapes"].list.shape]


def _shape_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        u = tf.placeholder(tf.float32, None, name="u")
        tf.placeholder(tf.int32, [], name="s")
        w = tf.Variable(tf.ones([3, 2]), name="w")
        y = tf.matmul(x, w, name="y")
        tf.unique(tf.constant([1, 2, 1]), name="uq")
        tf.split(y, 2, axis=1, name="sp")
        tf.no_op(name="nop")
        tf.add(u, 1.0, name="a")
    return g


def test_as_graph_def_add_shapes(tmp_path):
    g = _shape_graph()
    gd = g.as_graph_def(add_shapes=True)
    got = {n.name: (n.op, _shapes_of(n)) for n in gd.node}
    assert got == {
        "x": ("Placeholder", [[-1, 3]]), "u": ("Placeholder", ["?"]), "s": ("Placeholder", [[]]),
        "ones": ("Const", [[3, 2]]), "w": ("VariableV2", [[3, 2]]),
        "w/Assign": ("Assign", [[3, 2]]), "w/read": ("Identity", [[3, 2]]),
        "y": ("MatMul", [[-1, 2]]), "Const": ("Const", [[3]]), "uq": ("Unique", [[-1], [3]]),
        "sp/split_dim": ("Const", [[]]), "sp": ("Split", [[-1, 1], [-1, 1]]),
        "nop": ("NoOp", None), "a/y": ("Const", [[]]), "a": ("AddV2", ["?"])}
    assert not any("_output_shapes" in n.attr for n in g.as_graph_def().node)
    with g.as_default():
        meta = tf.train.export_meta_graph(str(tmp_path / "m.meta"))
        assert _shapes_of(next(n for n in meta.graph_def.node if n.name == "y")) == [[-1, 2]]
        tf.train.write_graph(g, str(tmp_path), "g.pbtxt")
    assert "_output_shapes" not in (tmp_path / "g.pbtxt").read_text()
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(gd, name="")
        assert g2.get_tensor_by_name("y:0").shape.as_list() == [None, 2]
        assert "_output_shapes" not in g2.get_operation_by_name("y").node_def.attr
        with pytest.raises(ValueError, match="has no attr named '_output_shapes'"):
            g2.get_operation_by_name("y").get_attr("_output_shapes")
        assert not any("_output_shapes" in n.attr for n in g2.as_graph_def().node)


def _import_edited(edit):
    gd = tf.GraphDef()
    gd.CopyFrom(_shape_graph().as_graph_def(add_shapes=True))
    nodes = {n.name: n for n in gd.node}
    edit(nodes)
    with tf.Graph().as_default() as g:
        tf.import_graph_def(gd, name="")
        return {t: g.get_tensor_by_name(t).shape for t in ("u:0", "a:0", "uq:0")}


def test_import_refines_shapes_from_output_shapes_and_checks_them():
    def refine_u(nodes):
        s = nodes["u"].attr["_output_shapes"].list.shape[0]
        s.unknown_rank = False
        s.dim.add().size = 2
        s.dim.add().size = 3

    shapes = _import_edited(refine_u)
    assert shapes["u:0"].as_list() == [2, 3] and shapes["a:0"].as_list() == [2, 3]

    def uq(nodes):
        nodes["uq"].attr["_output_shapes"].list.shape[0].dim[0].size = 2

    assert _import_edited(uq)["uq:0"].as_list() == [2]

    def more(nodes):  # more shapes than outputs: tolerated (TF logs a warning)
        nodes["a"].attr["_output_shapes"].list.shape.add().unknown_rank = True

    assert _import_edited(more)["a:0"].ndims is None

    def bad_dim(nodes):
        nodes["x"].attr["_output_shapes"].list.shape[0].dim[1].size = 4

    with pytest.raises(ValueError, match=re_escape(
            "Node 'x' has an _output_shapes attribute inconsistent with the GraphDef for "
            "output #0: Dimension 1 in both shapes must be equal, but are 3 and 4. Shapes "
            "are [?,3] and [?,4].")):
        _import_edited(bad_dim)

    def bad_rank(nodes):
        nodes["x"].attr["_output_shapes"].list.shape[0].dim.add().size = 4

    with pytest.raises(ValueError, match="output #0: Shapes must be equal rank, but are 2 "
                                         "and 3"):
        _import_edited(bad_rank)

    def few(nodes):
        del nodes["uq"].attr["_output_shapes"].list.shape[1]

    with pytest.raises(ValueError, match="Node 'uq' has 2 outputs but the _output_shapes "
                                         "attribute specifies shapes for 1 outputs"):
        _import_edited(few)


def test_import_with_input_map_checks_output_shapes():
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.float32, [None, 3], name="p")
        tf.identity(p, name="i")
    gd = g.as_graph_def(add_shapes=True)
    with tf.Graph().as_default():
        q = tf.placeholder(tf.float32, [None, 4], name="q")
        with pytest.raises(ValueError, match=re_escape(
                "Node 'imp/i' has an _output_shapes attribute inconsistent with the GraphDef "
                "for output #0: Dimension 1 in both shapes must be equal, but are 4 and 3. "
                "Shapes are [?,4] and [?,3].")):
            tf.import_graph_def(gd, input_map={"p:0": q}, name="imp")
    with tf.Graph().as_default() as g3:
        q = tf.placeholder(tf.float32, None, name="q")
        tf.import_graph_def(gd, input_map={"p:0": q}, name="imp")
        assert g3.get_tensor_by_name("imp/i:0").shape.as_list() == [None, 3]


def re_escape(text: str) -> str:
    import re

    return re.escape(text)


# -- 3. tf.raw_ops.ParseExample (V1) ------------------------------------------------------------
def _example(a, b, c=None) -> bytes:
    feat = {"a": tf.train.Feature(float_list=tf.train.FloatList(value=a)),
            "b": tf.train.Feature(int64_list=tf.train.Int64List(value=b))}
    if c is not None:
        feat["c"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=c))
    return tf.train.Example(features=tf.train.Features(feature=feat)).SerializeToString()


DATA = [_example([1., 2.], [3, 4, 5], [b"x"]), _example([3., 4.], []),
        _example([5., 6.], [7], [b"y", b"z"])]


def test_raw_parse_example_v1_layout_and_values():
    with tf.Graph().as_default() as g:
        s = tf.placeholder(tf.string, [None], name="s")
        out = tf.raw_ops.ParseExample(
            serialized=s, names=tf.constant([], tf.string),
            sparse_keys=[tf.constant("b"), tf.constant("c")],
            dense_keys=[tf.constant("a"), tf.constant("d")],
            dense_defaults=[tf.constant([], tf.float32), tf.constant([9], tf.int64)],
            sparse_types=[tf.int64, tf.string], dense_shapes=[[2], [1]], name="pe")
        assert type(out).__name__ == "ParseExample"
        assert out._fields == ("sparse_indices", "sparse_values", "sparse_shapes",
                               "dense_values")
        assert [len(group) for group in out] == [2, 2, 2, 2]
        op = g.get_operation_by_name("pe")
        assert op.type == "ParseExample" and len(op.inputs) == 8
        assert op.get_attr("Nsparse") == 2 and op.get_attr("Ndense") == 2
        assert op.get_attr("sparse_types") == [tf.int64, tf.string]
        assert op.get_attr("Tdense") == [tf.float32, tf.int64]
        assert [tf.TensorShape(x).as_list() for x in op.get_attr("dense_shapes")] == [[2], [1]]
        assert [(t.name, t.shape.as_list(), t.dtype.name) for t in op.outputs] == [
            ("pe:0", [None, 2], "int64"), ("pe:1", [None, 2], "int64"),
            ("pe:2", [None], "int64"), ("pe:3", [None], "string"), ("pe:4", [2], "int64"),
            ("pe:5", [2], "int64"), ("pe:6", [None, 2], "float32"),
            ("pe:7", [None, 1], "int64")]
        assert sorted(op.node_def.attr) == ["Ndense", "Nsparse", "Tdense", "dense_shapes",
                                            "sparse_types"]
        with tf.Session() as sess:
            r = sess.run(out, {s: DATA})
    assert [x.tolist() for x in r.sparse_indices] == [
        [[0, 0], [0, 1], [0, 2], [2, 0]], [[0, 0], [2, 0], [2, 1]]]
    assert [x.tolist() for x in r.sparse_values] == [[3, 4, 5, 7], [b"x", b"y", b"z"]]
    assert [x.tolist() for x in r.sparse_shapes] == [[3, 3], [3, 2]]
    assert [x.tolist() for x in r.dense_values] == [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
                                                    [[9], [9], [9]]]


def test_raw_parse_example_v1_errors():
    def build(**kw):
        args = dict(serialized=s, names=tf.constant([], tf.string),
                    sparse_keys=[tf.constant("b")], dense_keys=[tf.constant("a")],
                    dense_defaults=[tf.constant([], tf.float32)], sparse_types=[tf.int64],
                    dense_shapes=[[2]])
        args.update(kw)
        return tf.raw_ops.ParseExample(**args)

    with tf.Graph().as_default():
        s = tf.placeholder(tf.string, [None], name="s")
        with pytest.raises(ValueError, match=re_escape("len(sparse_keys) != len(sparse_types)")):
            build(sparse_types=[tf.int64, tf.string])
        with pytest.raises(ValueError, match=re_escape("len(dense_keys) != len(dense_shapes)")):
            build(dense_shapes=[[2], [3]])
        with pytest.raises(ValueError, match=re_escape("len(dense_keys) != len(dense_types)")):
            build(dense_defaults=[tf.constant([], tf.float32), tf.constant([], tf.float32)])
        with pytest.raises(TypeError, match="Value passed to parameter 'sparse_types' has "
                                            "DataType float64 not in list of allowed values: "
                                            "float32, int64, string"):
            build(sparse_types=[tf.float64])
        assert [len(x) for x in build(sparse_keys=[], sparse_types=[])] == [0, 0, 0, 1]
        assert [len(x) for x in build(sparse_keys=["b"], dense_keys=["a"])] == [1, 1, 1, 1]
        wrong = build(sparse_keys=[], sparse_types=[], dense_shapes=[[3]])
        with tf.Session() as sess, pytest.raises(
                tf.errors.InvalidArgumentError,
                match=re_escape("Name: <unknown>, Key: a, Index: 0.  Number of float values "
                                "!= expected.  Values size: 2 but output shape: [3]")):
            sess.run(wrong, {s: DATA})


def test_raw_parse_example_v1_graph_def_round_trip():
    with tf.Graph().as_default() as g:
        s = tf.placeholder(tf.string, [None], name="s")
        out = tf.raw_ops.ParseExample(
            serialized=s, names=[], sparse_keys=["b"], dense_keys=["a", "seq"],
            dense_defaults=[[0., 0.], np.float32(-1)], sparse_types=[tf.int64],
            dense_shapes=[[2], [None]], name="pe")
        op = g.get_operation_by_name("pe")
        assert [t.shape.as_list() if t.shape.ndims is not None else None
                for t in op.outputs] == [[None, 2], [None], [2], [None, 2], [None, None]]
        assert [t.op.name for t in op.inputs] == [
            "s", "pe/names", "pe/sparse_keys_0", "pe/dense_keys_0", "pe/dense_keys_1",
            "pe/dense_defaults_0", "pe/dense_defaults_1"]
        with tf.Session() as sess:
            r = sess.run(out, {s: DATA[:2]})
    assert r.dense_values[1].tolist() == [[], []]
    gd = g.as_graph_def()
    node = next(n for n in gd.node if n.name == "pe")
    assert list(node.input) == ["s", "pe/names", "pe/sparse_keys_0", "pe/dense_keys_0",
                                "pe/dense_keys_1", "pe/dense_defaults_0", "pe/dense_defaults_1"]
    assert sorted(node.attr) == ["Ndense", "Nsparse", "Tdense", "dense_shapes", "sparse_types"]
    assert [[d.size for d in sh.dim] for sh in node.attr["dense_shapes"].list.shape] == \
        [[2], [-1]]
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(gd, name="")
        outs = g2.get_operation_by_name("pe").outputs
        assert len(outs) == 5
        with tf.Session() as sess:
            got = sess.run(outs, {"s:0": DATA[:2]})
    assert [np.asarray(x).tolist() for x in got] == [
        [[0, 0], [0, 1], [0, 2]], [3, 4, 5], [2, 3], [[1.0, 2.0], [3.0, 4.0]], [[], []]]


def test_object_checkpoint_of_a_model_holding_a_subclassed_model(tmp_path):
    with tf.Graph().as_default():
        m = build(tf, "sub_in_fn")
        ckpt = tf.train.Checkpoint(model=m)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = ckpt.save(str(tmp_path / "ck"), session=sess)
    assert _ckpt_keys(path) == sorted(
        ["_CHECKPOINTABLE_OBJECT_GRAPH", "save_counter" + _VALUE,
         _lw("model", 1, "bias"), _lw("model", 1, "kernel")]
        + [_lw("model", 0, f"bn/{w}") for w in ("beta", "gamma", "moving_mean",
                                                  "moving_variance")]
        + [_lw("model", 0, f"{d}/{w}") for d in ("d1", "d2") for w in ("bias", "kernel")])
