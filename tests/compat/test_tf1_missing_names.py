"""The TF 1.x names session 14 added (docs/tf1-compatibility.md's coverage list), against
TensorFlow 2.15 (tf.compat.v1, v2 behaviour disabled): every expected value below was
printed by the tf-oracle. `tf.random.Generator`: tests/compat/test_tf1_random_generator.py.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import flowgraph as tf


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


# -- tf.nn.experimental ----------------------------------------------------------------
def test_stateless_dropout_values_and_names():
    x = tf.reshape(tf.range(1.0, 9.0), [2, 4])
    a = tf.nn.experimental.stateless_dropout(x, rate=0.5, seed=[1, 2])
    b = tf.nn.experimental.stateless_dropout(x, rate=tf.constant(0.25), seed=[3, 4],
                                             noise_shape=[2, 1])
    c = tf.nn.experimental.general_dropout(
        x, 0.5, lambda shape, dtype: tf.random.stateless_uniform(shape, seed=[1, 2],
                                                                 dtype=dtype))
    assert (a.name, b.name, c.name) == ("stateless_dropout/SelectV2:0",
                                        "stateless_dropout_1/SelectV2:0",
                                        "general_dropout/SelectV2:0")
    assert a.shape.as_list() == [2, 4]
    with tf.Session() as sess:
        va, vb, vc = sess.run([a, b, c])
    assert va.tolist() == [[2.0, 0.0, 6.0, 0.0], [0.0, 12.0, 0.0, 0.0]]
    np.testing.assert_allclose(vb, [[0, 0, 0, 0], [6.6666665, 8.0, 9.333333, 10.666667]],
                               rtol=1e-6)
    assert vc.tolist() == va.tolist()
    assert tf.nn.experimental.stateless_dropout(x, rate=0.0, seed=[1, 2]) is x


def test_stateless_dropout_errors():
    with pytest.raises(ValueError, match=r"range \[0, 1\). Received: rate=1.0"):
        tf.nn.experimental.stateless_dropout(tf.ones([2]), rate=1.0, seed=[1, 2])
    with pytest.raises(ValueError, match="must be a floating point tensor"):
        tf.nn.experimental.stateless_dropout(tf.constant([1, 2]), rate=0.5, seed=[1, 2])


# -- tf.layers.InputSpec / experimental ------------------------------------------------
def test_input_spec_and_dense_checks():
    spec = tf.layers.InputSpec(ndim=2, axes={-1: 3})
    assert repr(spec) == "InputSpec(ndim=2, axes={-1: 3})"
    s = tf.layers.InputSpec(shape=(None, 3))
    assert (s.shape, s.ndim) == ((None, 3), 2)
    assert tf.layers.InputSpec(ndim=2).get_config() == {
        "dtype": None, "shape": None, "ndim": 2, "max_ndim": None, "min_ndim": None,
        "axes": {}}
    d = tf.layers.Dense(3)
    assert repr(d.input_spec) == "InputSpec(min_ndim=2)"
    with pytest.raises(ValueError, match="expected min_ndim=2, found ndim=1"):
        d(tf.ones([4]))
    d(tf.ones([2, 5]))
    assert repr(d.input_spec) == "InputSpec(min_ndim=2, axes={-1: 5})"
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 5, "
                                         r"but received input with shape \(2, 4\)"):
        d(tf.ones([2, 4]))


def test_keras_style_scope():
    with tf.layers.experimental.keras_style_scope():
        layer = tf.layers.Dense(2)
        layer(tf.ones([1, 3]))
        layer(tf.ones([4, 3]))
        assert len(layer.variables) == 2
        with pytest.raises(ValueError, match="reuse argument not allowed"):
            tf.layers.Dense(2, _reuse=True)
    tf.layers.Dense(2, _reuse=True)  # allowed again outside the scope


# -- tf.RaggedTensorSpec, tf.wrap_function ---------------------------------------------
def test_ragged_tensor_spec():
    spec = tf.RaggedTensorSpec([None, None], tf.int32)
    assert repr(spec) == ("RaggedTensorSpec(TensorShape([Dimension(None), Dimension(None)]), "
                          "tf.int32, 1, tf.int64)")
    s2 = tf.RaggedTensorSpec([2, None, 3], tf.float32, ragged_rank=1)
    assert (s2.ragged_rank, s2.shape.as_list(), s2.dtype) == (1, [2, None, 3], tf.float32)
    assert tf.RaggedTensorSpec([2, None]).row_splits_dtype == tf.int64
    assert tf.RaggedTensorSpec([2, None]).value_type is tf.RaggedTensor
    assert tf.RaggedTensorSpec([2, None], tf.int32) == tf.RaggedTensorSpec([2, None], tf.int32)
    rt = tf.ragged.constant([[1, 2], [3]])
    assert repr(tf.RaggedTensorSpec.from_value(rt)) == (
        "RaggedTensorSpec(TensorShape([Dimension(2), Dimension(None)]), tf.int32, 1, "
        "tf.int64)")
    assert spec.is_compatible_with(rt)
    assert tf.RaggedTensorSpec([None], tf.int32).ragged_rank == 0
    with pytest.raises(ValueError, match=r"`ragged_rank` \(2\) must be less than rank \(2\)"):
        tf.RaggedTensorSpec([None, None], tf.int32, ragged_rank=2)


def test_wrap_function():
    double = tf.wrap_function(lambda x: x * 2.0, [tf.TensorSpec([2], tf.float32)])
    assert double.outputs[0].shape.as_list() == [2]
    assert double.inputs[0].dtype == tf.float32
    y = double(tf.constant([1.0, 2.0]))
    assert y.shape.as_list() == [2]
    pruned = double.prune(double.inputs[0], double.outputs[0])
    z = pruned(tf.constant([3.0, 4.0]))
    with tf.Session() as sess:
        assert sess.run(y).tolist() == [2.0, 4.0]
        assert sess.run(z).tolist() == [6.0, 8.0]


# -- tf.ragged_fill_empty_rows ----------------------------------------------------------
def test_ragged_fill_empty_rows_and_grad():
    r = tf.ragged_fill_empty_rows(value_rowids=tf.constant([0, 0, 2, 2], tf.int64),
                                  values=tf.constant([1.0, 2.0, 3.0, 4.0]),
                                  nrows=tf.constant(4, tf.int64),
                                  default_value=tf.constant(-1.0))
    assert r.output_value_rowids.name == "RaggedFillEmptyRows:0"
    assert [t.shape.as_list() for t in r] == [[None], [None], [None], [4]]
    assert [t.dtype for t in r] == [tf.int64, tf.float32, tf.bool, tf.int64]
    rg = tf.ragged_fill_empty_rows_grad(reverse_index_map=r.reverse_index_map,
                                        grad_values=tf.constant([1.0, 2.0, 3.0, 4.0, 5.0,
                                                                 6.0]))
    assert [t.shape.as_list() for t in rg] == [[4], []]
    with tf.Session() as sess:
        out, grad = sess.run([r, rg])
    assert out.output_value_rowids.tolist() == [0, 0, 1, 2, 2, 3]
    assert out.output_values.tolist() == [1.0, 2.0, -1.0, 3.0, 4.0, -1.0]
    assert out.empty_row_indicator.tolist() == [False, True, False, True]
    assert out.reverse_index_map.tolist() == [0, 1, 3, 4]
    assert grad.d_values.tolist() == [1.0, 2.0, 4.0, 5.0]
    assert float(grad.d_default_value) == 9.0


def test_ragged_fill_gradient_matches_finite_differences():
    values = tf.constant([0.5, -1.0, 2.0], tf.float64)
    default = tf.constant(0.25, tf.float64)
    r = tf.ragged_fill_empty_rows(tf.constant([1, 1, 3], tf.int64), values,
                                  tf.constant(5, tf.int64), default)
    w = tf.constant(np.arange(1.0, 7.0))  # output has 3 + 3 filled rows
    loss = tf.reduce_sum(r.output_values * w)
    dv, dd = tf.gradients(loss, [values, default])
    with tf.Session() as sess:
        gv, gd = sess.run([dv, dd])
    # outputs: row0 default, row1 v0 v1, row2 default, row3 v2, row4 default
    assert gv.tolist() == [2.0, 3.0, 5.0]
    assert gd == 1.0 + 4.0 + 6.0


def test_ragged_fill_rejects_bad_rowids():
    r = tf.ragged_fill_empty_rows(tf.constant([0, 5], tf.int64), tf.constant([1.0, 2.0]),
                                  tf.constant(3, tf.int64), tf.constant(0.0))
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="outside"):
        sess.run(r)


# -- tf.train.sdca_fprint / sdca_shrink_l1 ---------------------------------------------
def _probe(i: int, n: int) -> bytes:
    return bytes((i * 7 + j * 13) % 256 for j in range(n))


def test_sdca_fprint_matches_tensorflow_bytes():
    fp = tf.train.sdca_fprint(tf.constant(["abc", "", "hello world"]))
    assert (fp.name, fp.shape.as_list(), fp.dtype) == ("SdcaFprint:0", [3, 2], tf.int64)
    long = tf.train.sdca_fprint(tf.constant([_probe(17, 17), _probe(73, 129),
                                             _probe(79, 300), _probe(80, 513)]))
    with tf.Session() as sess:
        assert sess.run(fp).tolist() == [[4143508125394299908, -6879828354153669051],
                                         [4463240938071824939, 4374473821787594281],
                                         [2911873174415414509, 6996746284954752264]]
        assert sess.run(long).tolist() == [[-2515338942026001730, -2461752821050489692],
                                           [2041563522966265313, -1388350810442231104],
                                           [-4405879609909229331, -4534140475116468973],
                                           [8819389360944236773, 1556350745844272028]]


@pytest.mark.parametrize(("l1", "l2", "expected"), [
    (0.1, 1.0, [0.4, -0.0, 1.9, -0.9]), (0.1, 0.5, [0.3, -0.0, 1.8, -0.8]),
    (0.1, 0.0, [0.0, -0.0, 0.0, -0.0]), (0.3, 2.0, [0.35, -0.0, 1.85, -0.85])])
def test_sdca_shrink_l1(l1, l2, expected):
    v = tf.Variable([0.5, -0.05, 2.0, -1.0])
    op = tf.train.sdca_shrink_l1([v], l1=l1, l2=l2)
    assert (op.type, op.name, op.get_attr("num_features")) == ("SdcaShrinkL1", "SdcaShrinkL1",
                                                                1)
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(op)
        got = sess.run(v)
    np.testing.assert_allclose(got, np.float32(expected), rtol=1e-6)
    assert np.signbit(got).tolist() == np.signbit(np.array(expected)).tolist()


# -- tf.image.generate_bounding_box_proposals -------------------------------------------
def test_generate_bounding_box_proposals_graph_and_cpu_error():
    rois, probs = tf.image.generate_bounding_box_proposals(
        tf.zeros([1, 4, 4, 2]), tf.zeros([1, 4, 4, 8]), tf.ones([1, 5]),
        tf.zeros([1, 32, 4]), pre_nms_topn=10, post_nms_topn=5, min_size=1)
    assert (rois.name, rois.shape.as_list(), probs.shape.as_list()) == (
        "GenerateBoundingBoxProposals:0", [1, 5, 4], [1, 5])
    assert rois.op.get_attr("post_nms_topn") == 5
    assert rois.op.inputs[4].op.name == "GenerateBoundingBoxProposals/nms_threshold"
    # TF 2.15: no CPU kernel, InvalidArgumentError when run
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="GenerateBoundingBoxProposals"):
        sess.run(rois)
    with pytest.raises(ValueError, match="Dimension must be 5 but is 3"):
        tf.image.generate_bounding_box_proposals(tf.zeros([1, 4, 4, 2]),
                                                 tf.zeros([1, 4, 4, 8]), tf.ones([1, 3]),
                                                 tf.zeros([1, 32, 4]))


# -- tf.saved_model.save / load_v2 / Asset / SaveOptions --------------------------------
def test_saved_model_v2_names(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\n")
    a = tf.saved_model.Asset(str(vocab))
    assert a.asset_path.name == "asset_path:0"
    with tf.Session() as sess:
        assert sess.run(a.asset_path) == str(vocab).encode()
    o = tf.saved_model.SaveOptions(namespace_whitelist=["A"], save_debug_info=True)
    assert (o.namespace_whitelist, o.save_debug_info, o.function_aliases,
            o.experimental_io_device) == (["A"], True, {}, None)
    assert o.experimental_variable_policy is tf.saved_model.experimental.VariablePolicy.NONE
    with pytest.raises(ValueError, match=r"Received invalid VariablePolicy value: bogus\."):
        tf.saved_model.SaveOptions(experimental_variable_policy="bogus")
    assert [p.value for p in tf.saved_model.experimental.VariablePolicy] == [
        None, "save_variable_devices", "expand_distributed_variables"]
    assert tf.saved_model.experimental.save is tf.saved_model.save


def test_saved_model_save_and_load_v2(tmp_path):
    m = tf.Module()
    tf.saved_model.save(m, str(tmp_path / "m1"))
    assert "saved_model.pb" in os.listdir(tmp_path / "m1")
    loaded = tf.saved_model.load_v2(str(tmp_path / "m1"))
    assert list(loaded.signatures) == []
    with pytest.raises(ValueError, match="Expected an object of type `Trackable`"):
        tf.saved_model.save(object(), str(tmp_path / "m2"))
    with pytest.raises(TypeError, match="cannot read the values"):
        tf.saved_model.save(tf.train.Checkpoint(v=tf.Variable(1.0)), str(tmp_path / "m3"))
    with pytest.raises(OSError, match="SavedModel file does not exist at"):
        tf.saved_model.load_v2(str(tmp_path / "nope"))
    # a TF1 SavedModel through load_v2: signatures by key
    x = tf.placeholder(tf.float32, [None], name="x")
    v = tf.Variable(2.0, name="v")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.saved_model.simple_save(sess, str(tmp_path / "v1"), {"x": x}, {"y": x * v})
    model = tf.saved_model.load_v2(str(tmp_path / "v1"))
    try:
        assert list(model.signatures) == ["serving_default"]
        assert model.signatures["serving_default"](x=[1.0, 3.0])["y"].tolist() == [2.0, 6.0]
    finally:
        model.close()


# -- tf.distribute ----------------------------------------------------------------------
def test_distribute_default_strategy():
    s = tf.distribute.get_strategy()
    assert not tf.distribute.has_strategy()
    assert not tf.distribute.in_cross_replica_context()
    assert s.num_replicas_in_sync == 1
    ctx = tf.distribute.get_replica_context()
    assert (ctx.num_replicas_in_sync, ctx.replica_id_in_sync_group) == (1, 0)
    assert [r.value for r in tf.distribute.ReduceOp] == ["SUM", "MEAN"]
    assert tf.distribute.get_loss_reduction() is tf.distribute.ReduceOp.SUM
    with s.scope():
        out = s.run(lambda a: a * 2.0, args=(tf.constant([1.0, 2.0]),))
        total = s.reduce(tf.distribute.ReduceOp.SUM, out, axis=0)
    with tf.Session() as sess:
        assert sess.run(total) == 6.0
    assert ctx.merge_call(lambda strategy, v: v + 1, args=(1,)) == 2
    assert tf.distribute.Server is tf.train.Server
    ic = tf.distribute.InputContext(2, 1, 4)
    assert (tf.distribute.InputContext().num_input_pipelines,
            ic.get_per_replica_batch_size(8)) == (1, 2)
    assert tf.distribute.RunOptions().experimental_enable_dynamic_batch_size is True


def test_distribute_one_device_and_refusals():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    assert strategy.num_replicas_in_sync == 1
    with strategy.scope():
        assert tf.distribute.has_strategy()
        assert tf.distribute.get_strategy() is strategy
        c = tf.constant(1.0)
    assert "CPU:0" in c.device
    assert not tf.distribute.has_strategy()
    assert tf.distribute.MirroredStrategy().num_replicas_in_sync == 1  # mirrored: session 16
    with pytest.raises(NotImplementedError, match="TPUStrategy"):
        tf.distribute.experimental.TPUStrategy()


def test_cluster_resolvers(monkeypatch):
    spec = tf.train.ClusterSpec({"worker": ["w0:2222", "w1:2222"]})
    r = tf.distribute.cluster_resolver.SimpleClusterResolver(spec, task_type="worker",
                                                             task_id=1)
    # TF 2.15: without a task, master() is the `master` argument ('' here)
    assert (r.master(), r.master("worker", 1, rpc_layer="grpc")) == ("", "grpc://w1:2222")
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"ps": ["p:1"]},
                                                "task": {"type": "ps", "index": 0}}))
    t = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    assert (t.task_type, t.task_id, t.cluster_spec().as_dict()) == ("ps", 0, {"ps": ["p:1"]})
    with pytest.raises(NotImplementedError, match="SimpleClusterResolver"):
        tf.distribute.cluster_resolver.GCEClusterResolver()
    # TPUClusterResolver: TF's ValueError without a name (tests/compat/test_tpu_estimator.py).
    with pytest.raises(ValueError, match=r"Please provide a TPU Name to connect to\."):
        tf.distribute.cluster_resolver.TPUClusterResolver()


# -- tf.autograph -----------------------------------------------------------------------
def test_autograph_entry_points(capsys):
    def f(x):
        return x * 2

    g = tf.autograph.to_graph(f)
    with tf.Session() as sess:
        assert sess.run(g(tf.constant(3))) == 6
    assert tf.autograph.to_code(f).startswith("def f(x):")
    assert tf.autograph.experimental.do_not_convert(f)(3) == 6
    assert tf.autograph.experimental.do_not_convert()(f)(3) == 6
    assert tf.autograph.experimental.Feature.ALL.value == "ALL"
    assert tf.autograph.set_verbosity(0) is None
    assert tf.autograph.experimental.set_loop_options(parallel_iterations=2) is None
    tf.autograph.trace(1, 2)
    assert capsys.readouterr().out == "1 2\n"


# -- tf.profiler ------------------------------------------------------------------------
def test_profiler_flops_and_parameters_match_tensorflow():
    g = tf.get_default_graph()
    x = tf.placeholder(tf.float32, [8, 32, 32, 3])
    c = tf.layers.conv2d(x, 4, 3, activation=tf.nn.relu)
    p = tf.layers.max_pooling2d(c, 2, 2)
    h = tf.layers.dense(tf.layers.flatten(p), 10)
    _ = tf.reduce_mean(tf.square(h - 1.0)) + tf.add_n(
        [tf.reduce_sum(v) for v in tf.trainable_variables()])
    tf.nn.softmax(h)
    builder = tf.profiler.ProfileOptionBuilder
    r = tf.profiler.profile(g, options=builder(builder.float_operation())
                            .with_empty_output().build())
    assert r.total_float_ops == 1784860
    assert sorted((ch.name, ch.total_float_ops) for ch in r.children) == [
        ("AddN", 3), ("Mean", 80), ("Softmax", 400), ("Square", 80), ("Sum", 107),
        ("Sum_1", 3), ("Sum_2", 8999), ("Sum_3", 9), ("add", 1), ("conv2d/BiasAdd", 28800),
        ("conv2d/Conv2D", 1555200), ("conv2d/kernel/Initializer/random_uniform", 217),
        ("dense/BiasAdd", 80), ("dense/MatMul", 144000),
        ("dense/kernel/Initializer/random_uniform", 18001),
        ("max_pooling2d/MaxPool", 28800), ("sub", 80)]
    r2 = tf.profiler.profile(g, options=builder(builder.trainable_variables_parameter())
                             .with_empty_output().build())
    assert r2.total_parameters == 9122
    assert sorted((ch.name, ch.total_parameters) for ch in r2.children) == [
        ("conv2d", 112), ("dense", 9010)]


def test_profile_option_builder_dicts():
    assert tf.profiler.ProfileOptionBuilder().with_max_depth(3).select(["params"]).order_by(
        "params").account_displayed_op_only(True).with_min_parameters(1).build() == {
        "max_depth": 3, "min_bytes": 0, "min_micros": 0, "min_params": 1,
        "min_float_ops": 0, "min_occurrence": 0, "order_by": "params",
        "account_type_regexes": [".*"], "start_name_regexes": [".*"],
        "trim_name_regexes": [], "show_name_regexes": [".*"], "hide_name_regexes": [],
        "account_displayed_op_only": True, "select": ["params"], "step": -1,
        "output": "stdout"}
    assert tf.profiler.ProfileOptionBuilder.time_and_memory()["order_by"] == "micros"


# -- tf.experimental, tf.types, tf.train.experimental -----------------------------------
def test_experimental_and_types():
    with tf.experimental.async_scope():
        pass
    assert tf.experimental.async_clear_error() is None
    with tf.experimental.function_executor_type("SINGLE_THREADED_EXECUTOR"):
        pass
    with pytest.raises(tf.errors.NotFoundError, match="plugin"):
        tf.experimental.register_filesystem_plugin("/tmp/libfs.so")
    assert isinstance(tf.constant(1), tf.types.experimental.TensorLike)
    assert not isinstance(object(), tf.types.experimental.TensorLike)


def test_train_experimental_loss_scales():
    assert tf.train.experimental.FixedLossScale is tf.mixed_precision.experimental.FixedLossScale
    scale = tf.train.experimental.FixedLossScale(128.0)
    with tf.Session() as sess:
        assert sess.run(scale()) == 128.0
    with pytest.raises(TypeError):
        tf.train.experimental.PythonState()


# -- tf.io.decode_proto / encode_proto -------------------------------------------------
def _probe_descriptor(path) -> tuple[str, type]:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fds = descriptor_pb2.FileDescriptorSet()
    f = fds.file.add(name="probe_s14.proto", package="probe", syntax="proto2")
    T = descriptor_pb2.FieldDescriptorProto
    item = f.message_type.add(name="Item")
    for name, number, typ, label, extra in [
            ("id", 1, T.TYPE_INT64, 1, {}), ("score", 2, T.TYPE_FLOAT, 1,
                                              {"default_value": "0.5"}),
            ("tags", 3, T.TYPE_STRING, 3, {}), ("vals", 4, T.TYPE_INT32, 3, {}),
            ("flag", 5, T.TYPE_BOOL, 1, {}), ("d", 6, T.TYPE_DOUBLE, 3, {}),
            ("sub", 7, T.TYPE_MESSAGE, 1, {"type_name": ".probe.Sub"})]:
        item.field.add(name=name, number=number, type=typ, label=label, **extra)
    f.message_type.add(name="Sub").field.add(name="x", number=1, type=T.TYPE_INT32, label=1)
    path.write_bytes(fds.SerializeToString())
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    return str(path), message_factory.GetMessageClass(pool.FindMessageTypeByName("probe.Item"))


def test_decode_and_encode_proto(tmp_path):
    pytest.importorskip("google.protobuf")
    src, item = _probe_descriptor(tmp_path / "probe.desc")
    a = item(id=7, tags=["a", "bc"], vals=[1, 2, 3], flag=True, d=[1.5])
    a.sub.x = 4
    b = item(score=2.0, vals=[9])
    data = [a.SerializeToString(), b.SerializeToString()]
    fields = ["id", "score", "tags", "vals", "flag", "d", "sub"]
    types = [tf.int64, tf.float32, tf.string, tf.int32, tf.bool, tf.float64, tf.string]
    sizes, vals = tf.io.decode_proto(tf.constant(data), "probe.Item", fields, types,
                                     descriptor_source=src)
    assert (sizes.name, sizes.shape.as_list()) == ("DecodeProtoV2:0", [2, 7])
    assert [v.shape.as_list() for v in vals] == [[2, None]] * 7
    enc = tf.io.encode_proto(sizes, vals, fields, "probe.Item", descriptor_source=src)
    assert (enc.op.type, enc.shape.as_list()) == ("EncodeProto", [2])
    s2, v2 = tf.io.decode_proto(tf.constant([[data[0]], [data[1]]]), "probe.Item", ["vals"],
                                [tf.int64], descriptor_source=src)
    assert (s2.shape.as_list(), v2[0].shape.as_list()) == ([2, 1, 1], [2, 1, None])
    with tf.Session() as sess:
        sv, vv, ev, (s2v, v2v) = sess.run([sizes, vals, enc, (s2, v2)])
    assert sv.tolist() == [[1, 0, 2, 3, 1, 1, 1], [0, 1, 0, 1, 0, 0, 0]]
    assert [v.tolist() for v in vv] == [
        [[7], [0]], [[0.5], [2.0]], [[b"a", b"bc"], [b"", b""]], [[1, 2, 3], [9, 0, 0]],
        [[True], [False]], [[1.5], [0.0]], [[b"\x08\x04"], [b""]]]
    assert [item.FromString(x) == item.FromString(y) for x, y in zip(ev, data)] == [True,
                                                                                   True]
    assert [len(x) for x in ev] == [30, 7]
    assert s2v.tolist() == [[[3]], [[1]]] and v2v[0].tolist() == [[[1, 2, 3]], [[9, 0, 0]]]


@pytest.mark.parametrize(("message_type", "field", "dtype", "match"), [
    ("probe.Nope", "id", tf.int64, "No descriptor found for message type probe.Nope"),
    ("probe.Item", "nope", tf.int64, "Unknown field: nope"),
    ("probe.Item", "id", tf.string, "Unexpected output type")])
def test_decode_proto_errors(tmp_path, message_type, field, dtype, match):
    pytest.importorskip("google.protobuf")
    src, item = _probe_descriptor(tmp_path / "probe.desc")
    sizes, _ = tf.io.decode_proto(tf.constant([item(id=1).SerializeToString()]), message_type,
                                  [field], [dtype], descriptor_source=src)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match=match):
        sess.run(sizes)


def test_decode_proto_corrupt_input_is_data_loss(tmp_path):
    pytest.importorskip("google.protobuf")
    src, _ = _probe_descriptor(tmp_path / "probe.desc")
    sizes, _ = tf.io.decode_proto(tf.constant([b"\xff\xff"]), "probe.Item", ["id"],
                                  [tf.int64], descriptor_source=src)
    with tf.Session() as sess, pytest.raises(tf.errors.DataLossError):
        sess.run(sizes)


def test_proto_ops_without_protobuf(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_protobuf(name, *args, **kwargs):
        if name.startswith("google.protobuf"):
            raise ImportError("No module named 'google.protobuf'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_protobuf)
    with pytest.raises(ImportError, match="needs the protobuf package"):
        tf.io.decode_proto(tf.constant([b""]), "a.B", ["x"], [tf.int64])


# -- tf.train.sdca_optimizer --------------------------------------------------------------
# TF 2.15, one example (the visiting order cannot differ): sparse features 0 and 2 (values
# 1, 0.5) and a dense row, weight 2, l1=0.1, l2=0.5, 3 inner iterations, 2 loss partitions.
_SDCA_ONE = {
    "logistic_loss": ([0.0592666, 0.9002329, 0.0, 2.0], [0.2370665, 0.0, 0.1185333],
                      [0.4240239, 0.1034819]),
    "squared_loss": ([0.3560167, 5.9303789, -1.71, 2.0], [0.2240668, 0.0, 0.1120334],
                     [0.4007723, 0.0978074]),
    "hinge_loss": ([0.0117258, 0.8704739, -0.0, 2.0], [0.0469032, 0.0, 0.0234516],
                   [0.0838925, 0.0204737]),
    "smooth_hinge_loss": ([0.0114182, 0.1894312, 0.0, 2.0], [0.0456728, 0.0, 0.0228364],
                          [0.0816916, 0.0199366]),
    "poisson_loss": ([0.0142542, 0.1294835, 0.5916737, 2.0], [0.0570169, 0.0, 0.0285085],
                     [0.1019821, 0.0248884]),
}


@pytest.mark.parametrize("loss", sorted(_SDCA_ONE))
def test_sdca_optimizer_one_example_matches_tensorflow(loss):
    label = 3.0 if loss in ("squared_loss", "poisson_loss") else 1.0
    dual = 0.3 if loss == "squared_loss" else 0.0
    state, sparse, dense = tf.train.sdca_optimizer(
        [np.array([0, 0], np.int64)], [np.array([0, 2], np.int64)],
        [np.array([1.0, 0.5], np.float32)],
        [np.array([[1.7886284589767456, 0.4365098476409912]], np.float32)],
        np.array([2.0], np.float32), np.array([label], np.float32),
        [np.array([0, 1, 2], np.int64)], [np.array([0.1, -0.2, 0.3], np.float32)],
        [np.array([0.5, -0.25], np.float32)], np.array([[dual, 0, 0, 0]], np.float32),
        loss_type=loss, l1=0.1, l2=0.5, num_loss_partitions=2, num_inner_iterations=3)
    assert (state.op.type, state.shape.as_list(), sparse[0].shape.as_list(),
            dense[0].shape.as_list()) == ("SdcaOptimizer", [1, 4], [3], [2])
    with tf.Session() as sess:
        got = sess.run([state, sparse, dense])
    want_state, want_sparse, want_dense = _SDCA_ONE[loss]
    np.testing.assert_allclose(got[0][0], want_state, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1][0], want_sparse, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2][0], want_dense, rtol=1e-5, atol=1e-6)


def test_sdca_optimizer_converges_to_ridge_regression():
    # Repeated passes of squared-loss SDCA reach argmin sum w_i (x_i b - y_i)^2 / 2
    # + l2 / 2 |b|^2 (NumPy's closed form).
    rng = np.random.RandomState(0)
    x = rng.randn(20, 3).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.randn(20)).astype(np.float32)
    ew = rng.uniform(0.5, 2.0, 20).astype(np.float32)
    l2 = 2.0
    xs, ws = tf.placeholder(tf.float32, [None, 4]), tf.placeholder(tf.float32, [3])
    state, _, (delta,) = tf.train.sdca_optimizer(
        [], [], [], [x], ew, y, [], [], [ws], xs, loss_type="squared_loss", l1=0.0, l2=l2,
        num_loss_partitions=1, num_inner_iterations=1)
    s, w = np.zeros((20, 4), np.float32), np.zeros(3, np.float32)
    with tf.Session() as sess:
        for _ in range(60):
            s, d = sess.run([state, delta], {xs: s, ws: w})
            w = w + d
    want = np.linalg.solve(x.T @ (ew[:, None] * x) + l2 * np.eye(3), x.T @ (ew * y))
    np.testing.assert_allclose(w, want, rtol=1e-3, atol=1e-3)
    assert np.all(s[:, 3] == ew)


def test_sdca_optimizer_rejects_bad_labels_and_losses():
    with pytest.raises(ValueError, match="unsupported loss_type"):
        tf.train.sdca_optimizer([], [], [], [np.ones((1, 1), np.float32)], [1.0], [1.0], [],
                                [], [np.zeros(1, np.float32)], np.zeros((1, 4), np.float32),
                                "absolute_loss", 0.0, 1.0, 1, 1)
    state, _, _ = tf.train.sdca_optimizer(
        [], [], [], [np.ones((1, 1), np.float32)], [1.0], [0.5], [], [],
        [np.zeros(1, np.float32)], np.zeros((1, 4), np.float32), "logistic_loss", 0.0, 1.0,
        1, 1)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match=r"labels of 0\.0 or 1\.0"):
        sess.run(state)
