"""TensorFlow's internal import paths (``tensorflow.python.*``, ``tensorflow.core.*``)
under ``flowgraph.``: TF1 programs import ``graph_util``, ``gfile``, ``rnn_cell_impl``,
``gen_*_ops``, ``session_run_hook``, ``moving_averages``, ``file_io`` and the ``*_pb2``
message modules from there (`flowgraph.python.tf_paths`). Every value asserted below is
what TensorFlow 2.15 printed for the same program (tf-oracle)."""

import importlib
import os

import numpy as np
import pytest

import flowgraph as tf


def _imp(path):
    return importlib.import_module("flowgraph." + path)


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def test_generated_wrappers_take_positional_inputs_and_name_their_constants():
    gen_math_ops, gen_array_ops, gen_nn_ops = (
        _imp(f"python.ops.gen_{m}_ops") for m in ("math", "array", "nn"))
    a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    p = gen_math_ops.mat_mul(a, a, transpose_b=True, name="mm")
    r = gen_array_ops.reshape(a, [4])
    b = gen_nn_ops.bias_add(a, [1.0, -1.0])
    assert (p.op.name, p.op.type, r.op.type, b.op.type) == ("mm", "MatMul", "Reshape", "BiasAdd")
    assert r.op.inputs[1].op.name == "Reshape/shape"  # TF: constants in the op's scope
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(p), [[5.0, 11.0], [11.0, 25.0]])
    with pytest.raises(AttributeError, match="no attribute 'no_such_op'"):
        gen_math_ops.no_such_op  # noqa: B018
    with pytest.raises(TypeError, match="multiple values for argument 'a'"):
        gen_math_ops.mat_mul(a, a, a=a)


def test_raw_ops_name_python_values_after_their_argument():
    a = tf.constant([1.0])
    s = tf.raw_ops.AddN(inputs=[a, [2.0], [3.0]])
    r = tf.raw_ops.Reshape(tensor=[1.0, 2.0], shape=[2, 1], name="rs")
    c = tf.raw_ops.ConcatV2(values=[a, [5.0]], axis=0)
    assert [t.op.name for t in s.op.inputs] == ["Const", "AddN/inputs_1", "AddN/inputs_2"]
    assert (r.op.name, [t.op.name for t in r.op.inputs]) == ("rs", ["rs/tensor", "rs/shape"])
    assert [t.op.name for t in c.op.inputs] == ["Const", "ConcatV2/values_1", "ConcatV2/axis"]


def test_core_message_modules():
    types_pb2, graph_pb2 = _imp("core.framework.types_pb2"), _imp("core.framework.graph_pb2")
    assert (types_pb2.DT_FLOAT, types_pb2.DT_INT64, types_pb2.DT_STRING, types_pb2.DT_BOOL) \
        == (1, 9, 7, 10)
    assert (types_pb2.DataType.Name(3), types_pb2.DataType.Value("DT_HALF")) == ("DT_INT32", 19)
    tf.constant(1.0)
    gd = graph_pb2.GraphDef()
    gd.ParseFromString(tf.get_default_graph().as_graph_def().SerializeToString())
    assert (len(gd.node), gd.node[0].op) == (1, "Const")
    example_pb2, feature_pb2 = _imp("core.example.example_pb2"), _imp("core.example.feature_pb2")
    ex = example_pb2.Example(features=feature_pb2.Features(feature={
        "a": feature_pb2.Feature(int64_list=feature_pb2.Int64List(value=[7]))}))
    assert example_pb2.Example.FromString(
        ex.SerializeToString()).features.feature["a"].int64_list.value[0] == 7
    config_pb2 = _imp("core.protobuf.config_pb2")
    assert config_pb2.ConfigProto(allow_soft_placement=True).allow_soft_placement
    assert config_pb2.RunOptions.FULL_TRACE == 3
    assert _imp("core.framework.variable_pb2").VariableDef is not None
    assert _imp("core.util.event_pb2").Event is tf.Event


def test_framework_ops_and_training_paths_in_a_program():
    ops, dtypes = _imp("python.framework.ops"), _imp("python.framework.dtypes")
    tensor_shape = _imp("python.framework.tensor_shape")
    assert dtypes.as_dtype("float32") == dtypes.float32
    assert tensor_shape.TensorShape([None, 3]).as_list() == [None, 3]
    assert tensor_shape.unknown_shape().ndims is None
    rnn_cell_impl, rnn = _imp("python.ops.rnn_cell_impl"), _imp("python.ops.rnn")
    cell = rnn_cell_impl.LSTMCell(5)
    out, state = rnn.dynamic_rnn(cell, tf.ones([2, 3, 4]), dtype=tf.float32)
    assert out.get_shape().as_list() == [2, 3, 5] and type(state).__name__ == "LSTMStateTuple"
    assert isinstance(cell, rnn_cell_impl.RNNCell)
    hook_mod = _imp("python.training.session_run_hook")
    a = ops.convert_to_tensor([[1.0, 2.0], [3.0, 4.0]])
    p = tf.matmul(a, a, transpose_b=True)

    class Hook(hook_mod.SessionRunHook):
        def before_run(self, run_context):
            return hook_mod.SessionRunArgs(p)

        def after_run(self, run_context, run_values):
            self.seen = run_values.results

    hook = Hook()
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        sess.run(a)
    assert hook.seen.tolist() == [[5.0, 11.0], [11.0, 25.0]]
    tensor_util = _imp("python.framework.tensor_util")
    assert tensor_util.MakeNdarray(tensor_util.make_tensor_proto([1, 2])).tolist() == [1, 2]
    assert tensor_util.constant_value(tf.constant(5)) == 5
    control_flow_ops = _imp("python.ops.control_flow_ops")
    w = control_flow_ops.with_dependencies([tf.no_op()], a)
    assert (w.op.type, w.op.name) == ("Identity", "control_dependency")
    init_ops = _imp("python.ops.init_ops")
    assert type(init_ops.Constant(1.0)).__name__ == "Constant"
    assert type(init_ops.glorot_uniform_initializer()).__name__ == "GlorotUniform"
    assert _imp("python.framework.graph_util").convert_variables_to_constants is \
        tf.graph_util.convert_variables_to_constants
    assert _imp("python.platform.gfile").GFile is tf.gfile.GFile


def test_assign_moving_average_as_hand_written_batch_norm_layers_call_it():
    moving_averages = _imp("python.training.moving_averages")
    mean = tf.Variable([0.0, 0.0], name="moving_mean", trainable=False)
    var = tf.Variable([1.0, 1.0], name="moving_var", trainable=False)
    x = tf.placeholder(tf.float32, [2])
    u1 = moving_averages.assign_moving_average(mean, x, 0.9)
    u2 = moving_averages.assign_moving_average(var, x, 0.99, zero_debias=False, name="upd")
    assert (u1.name, u1.op.type, u2.name, u2.op.type) == (
        "AssignMovingAvg:0", "Assign", "upd:0", "AssignSub")
    assert sorted(v.op.name for v in tf.global_variables()) == [
        "moving_mean", "moving_mean/biased", "moving_mean/local_step", "moving_var"]
    assert tf.trainable_variables() == []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(3):
            a, b = sess.run([u1, u2], {x: [1.0 + i, 2.0]})
        np.testing.assert_allclose(a, [2.0701100826263428, 2.0], rtol=1e-6)
        np.testing.assert_allclose(b, [1.0298999547958374, 1.0297000408172607], rtol=1e-6)


def test_util_and_file_io_paths(tmp_path):
    nest, compat = _imp("python.util.nest"), _imp("python.util.compat")
    assert nest.flatten({"b": 1, "a": (2, 3)}) == [2, 3, 1] and nest.is_nested([1])
    assert (compat.as_bytes("x"), compat.as_text(b"y")) == (b"x", "y")
    file_io = _imp("python.lib.io.file_io")
    path = os.path.join(tmp_path, "q", "w.txt")
    file_io.recursive_create_dir(os.path.dirname(path))
    file_io.write_string_to_file(path, "hi")
    assert file_io.file_exists(path) and file_io.read_file_to_string(path) == "hi"
    assert file_io.list_directory(str(tmp_path)) == ["q"] and file_io.is_directory(str(tmp_path))
    file_io.atomic_write_string_to_file(path, "replaced")
    assert file_io.read_file_to_string(path, binary_mode=True) == b"replaced"
    assert os.listdir(os.path.dirname(path)) == ["w.txt"]  # no temporary left


def test_unknown_paths_and_names_fail_clearly():
    with pytest.raises(ImportError):
        _imp("python.ops.no_such_ops")
    with pytest.raises(AttributeError, match=r"tensorflow\.python\.ops\.array_ops.*no_such"):
        _imp("python.ops.array_ops").no_such  # noqa: B018
    from flowgraph.python.framework import graph_util  # the from-import form

    assert graph_util.extract_sub_graph is tf.graph_util.extract_sub_graph
