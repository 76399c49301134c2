"""Constants made from Python values get TensorFlow's names (`mul/y`, `Reshape/shape`).

TensorFlow 1.x converts an op's non-tensor arguments inside a name scope named after the
op, each under its argument's name, and names the op after the scope
(`flowgraph.ops.op_util.op_scope`). Every expected list below was recorded from
TensorFlow 2.15 (`tf.compat.v1`) with `/work/shared/tools/tf-oracle`: the ops each
snippet adds to a fresh graph, as ``name<-input,input``.
"""

import numpy as np
import pytest

import flowgraph as tf

# (label, snippet, ops it adds in TensorFlow, in creation order)
CASES = [
    ('mul_operator_twice', 'x * 2.0; x * 2.0',
     [
         'mul/y<-',
         'mul<-x:0,mul/y:0',
         'mul_1/y<-',
         'mul_1<-x:0,mul_1/y:0',
     ]),
    ('reflected_sub', '2.0 - x',
     [
         'sub/x<-',
         'sub<-sub/x:0,x:0',
     ]),
    ('truediv_operator_int', 'xi / 2',
     [
         'truediv/y<-',
         'truediv/Cast<-xi:0',
         'truediv/Cast_1<-truediv/y:0',
         'truediv<-truediv/Cast:0,truediv/Cast_1:0',
     ]),
    ('floordiv_operator', 'x // 2.0',
     [
         'floordiv/y<-',
         'floordiv<-x:0,floordiv/y:0',
     ]),
    ('mod_pow_operators', 'x % 2.0; 2.0 ** x',
     [
         'mod/y<-',
         'mod<-x:0,mod/y:0',
         'pow/x<-',
         'pow<-pow/x:0,x:0',
     ]),
    ('comparison_operators', 'x < 1.0; 1.0 < x',
     [
         'Less/y<-',
         'Less<-x:0,Less/y:0',
         'Greater/y<-',
         'Greater<-x:0,Greater/y:0',
     ]),
    ('logical_operators', 'b & True; True | b',
     [
         'and/y<-',
         'and<-b:0,and/y:0',
         'or/x<-',
         'or<-or/x:0,b:0',
     ]),
    ('xor_operator', 'b ^ True',
     [
         'xor/LogicalOr/y<-',
         'xor/LogicalOr<-b:0,xor/LogicalOr/y:0',
         'xor/LogicalAnd/y<-',
         'xor/LogicalAnd<-b:0,xor/LogicalAnd/y:0',
         'xor/LogicalNot<-xor/LogicalAnd:0',
         'xor<-xor/LogicalOr:0,xor/LogicalNot:0',
     ]),
    ('logical_xor', 'tf.logical_xor(b, True)',
     [
         'LogicalOr/y<-',
         'LogicalOr<-b:0,LogicalOr/y:0',
         'LogicalAnd/y<-',
         'LogicalAnd<-b:0,LogicalAnd/y:0',
         'LogicalNot<-LogicalAnd:0',
         'LogicalXor<-LogicalOr:0,LogicalNot:0',
     ]),
    ('add_named', "tf.add(x, 3.0, name='myadd'); tf.add(x, 3.0, name='myadd')",
     [
         'myadd/y<-',
         'myadd<-x:0,myadd/y:0',
         'myadd_1/y<-',
         'myadd_1<-x:0,myadd_1/y:0',
     ]),
    ('inside_scopes', "with tf.name_scope('s'): tf.add(x, 3.0); x * 2.0\n"
                      "with tf.variable_scope('vs'): tf.reshape(x, [-1])",
     [
         's/Add/y<-',
         's/Add<-x:0,s/Add/y:0',
         's/mul/y<-',
         's/mul<-x:0,s/mul/y:0',
         'vs/Reshape/shape<-',
         'vs/Reshape<-x:0,vs/Reshape/shape:0',
     ]),
    ('maximum_minimum', 'tf.maximum(x, 0.0); tf.minimum(x, 0.0)',
     [
         'Maximum/y<-',
         'Maximum<-x:0,Maximum/y:0',
         'Minimum/y<-',
         'Minimum<-x:0,Minimum/y:0',
     ]),
    ('squared_difference', 'tf.squared_difference(x, 1.0)',
     [
         'SquaredDifference/y<-',
         'SquaredDifference<-x:0,SquaredDifference/y:0',
     ]),
    ('equal_not_equal', 'tf.equal(x, 1.0); tf.not_equal(x, 1.0)',
     [
         'Equal/y<-',
         'Equal<-x:0,Equal/y:0',
         'NotEqual/y<-',
         'NotEqual<-x:0,NotEqual/y:0',
     ]),
    ('both_python', 'tf.add(1.0, 2.0)',
     [
         'Add/x<-',
         'Add/y<-',
         'Add<-Add/x:0,Add/y:0',
     ]),
    ('unary_python', 'tf.sqrt(4.0)',
     [
         'Sqrt/x<-',
         'Sqrt<-Sqrt/x:0',
     ]),
    ('div_no_nan', 'tf.div_no_nan(x, 2.0)',
     [
         'div_no_nan/y<-',
         'div_no_nan<-x:0,div_no_nan/y:0',
     ]),
    ('div', 'tf.div(x, 4.0)',
     [
         'div/y<-',
         'div<-x:0,div/y:0',
     ]),
    ('assign_family', 'tf.assign(v, 5.0); tf.assign_add(v, 1.0); tf.assign_sub(v, 1.0)',
     [
         'Assign/value<-',
         'Assign<-v:0,Assign/value:0',
         'AssignAdd/value<-',
         'AssignAdd<-v:0,AssignAdd/value:0',
         'AssignSub/value<-',
         'AssignSub<-v:0,AssignSub/value:0',
     ]),
    ('variable_methods', 'v.assign(2.0); v.assign_add(2.0); v.assign_sub(2.0)',
     [
         'Assign/value<-',
         'Assign<-v:0,Assign/value:0',
         'AssignAdd/value<-',
         'AssignAdd<-v:0,AssignAdd/value:0',
         'AssignSub/value<-',
         'AssignSub<-v:0,AssignSub/value:0',
     ]),
    ('variable_operand', 'v * 2.0',
     [
         'mul/y<-',
         'mul<-v/read:0,mul/y:0',
     ]),
    ('reshape', 'tf.reshape(x, [3, 2])',
     [
         'Reshape/shape<-',
         'Reshape<-x:0,Reshape/shape:0',
     ]),
    ('reshape_packed_shape', 'tf.reshape(xu, [tf.shape(xu)[0], -1])',
     [
         'Shape<-xu:0',
         'strided_slice/stack<-',
         'strided_slice/stack_1<-',
         'strided_slice/stack_2<-',
         'strided_slice<-Shape:0,strided_slice/stack:0,strided_slice/stack_1:0,strided_slice/stack_2:0',
         'Reshape/shape/1<-',
         'Reshape/shape<-strided_slice:0,Reshape/shape/1:0',
         'Reshape<-xu:0,Reshape/shape:0',
     ]),
    ('concat', 'tf.concat([x, x], 0)',
     [
         'concat/axis<-',
         'concat<-x:0,x:0,concat/axis:0',
     ]),
    ('concat_python_value', 'tf.concat([x, [[1.0, 2.0, 3.0]]], 0)',
     [
         'concat/values_1<-',
         'concat/axis<-',
         'concat<-x:0,concat/values_1:0,concat/axis:0',
     ]),
    ('concat_single', 'tf.concat([x], 0)',
     [
         'concat/concat_dim<-',
         'concat/concat<-x:0',
     ]),
    ('fill', 'tf.fill([2], 1.0)',
     [
         'Fill/dims<-',
         'Fill/value<-',
         'Fill<-Fill/dims:0,Fill/value:0',
     ]),
    ('expand_dims', 'tf.expand_dims(x, 0)',
     [
         'ExpandDims/dim<-',
         'ExpandDims<-x:0,ExpandDims/dim:0',
     ]),
    ('tile', 'tf.tile(x, [1, 2])',
     [
         'Tile/multiples<-',
         'Tile<-x:0,Tile/multiples:0',
     ]),
    ('pad', 'tf.pad(x, [[1, 1], [0, 0]]); tf.pad(x, [[1, 1], [0, 0]], constant_values=1.0)',
     [
         'Pad/paddings<-',
         'Pad<-x:0,Pad/paddings:0',
         'PadV2/paddings<-',
         'PadV2/constant_values<-',
         'PadV2<-x:0,PadV2/paddings:0,PadV2/constant_values:0',
     ]),
    ('transpose', 'tf.transpose(x); tf.transpose(x, [1, 0])',
     [
         'transpose/perm<-',
         'transpose<-x:0,transpose/perm:0',
         'transpose_1/perm<-',
         'transpose_1<-x:0,transpose_1/perm:0',
     ]),
    ('slice', 'tf.slice(x, [0, 0], [1, 2])',
     [
         'Slice/begin<-',
         'Slice/size<-',
         'Slice<-x:0,Slice/begin:0,Slice/size:0',
     ]),
    ('getitem', 'x[1:2]; x[0, 1:]',
     [
         'strided_slice/stack<-',
         'strided_slice/stack_1<-',
         'strided_slice/stack_2<-',
         'strided_slice<-x:0,strided_slice/stack:0,strided_slice/stack_1:0,strided_slice/stack_2:0',
         'strided_slice_1/stack<-',
         'strided_slice_1/stack_1<-',
         'strided_slice_1/stack_2<-',
         'strided_slice_1<-x:0,strided_slice_1/stack:0,strided_slice_1/stack_1:0,strided_slice_1/stack_2:0',
     ]),
    ('gather', 'tf.gather(x, [0, 1]); tf.gather(x, [0], axis=1)',
     [
         'GatherV2/indices<-',
         'GatherV2/axis<-',
         'GatherV2<-x:0,GatherV2/indices:0,GatherV2/axis:0',
         'GatherV2_1/indices<-',
         'GatherV2_1/axis<-',
         'GatherV2_1<-x:0,GatherV2_1/indices:0,GatherV2_1/axis:0',
     ]),
    ('one_hot', 'tf.one_hot([0, 1], 3); tf.one_hot(xi, 3)',
     [
         'one_hot/on_value<-',
         'one_hot/off_value<-',
         'one_hot/indices<-',
         'one_hot/depth<-',
         'one_hot<-one_hot/indices:0,one_hot/depth:0,one_hot/on_value:0,one_hot/off_value:0',
         'one_hot_1/on_value<-',
         'one_hot_1/off_value<-',
         'one_hot_1/depth<-',
         'one_hot_1<-xi:0,one_hot_1/depth:0,one_hot_1/on_value:0,one_hot_1/off_value:0',
     ]),
    ('range', 'tf.range(5); tf.range(1, 5, 2)',
     [
         'range/start<-',
         'range/limit<-',
         'range/delta<-',
         'range<-range/start:0,range/limit:0,range/delta:0',
         'range_1/start<-',
         'range_1/limit<-',
         'range_1/delta<-',
         'range_1<-range_1/start:0,range_1/limit:0,range_1/delta:0',
     ]),
    ('reductions', 'tf.reduce_sum(x, 0); tf.reduce_mean(x, axis=1); tf.reduce_max(x)',
     [
         'Sum/reduction_indices<-',
         'Sum<-x:0,Sum/reduction_indices:0',
         'Mean/reduction_indices<-',
         'Mean<-x:0,Mean/reduction_indices:0',
         'Const<-',
         'Max<-x:0,Const:0',
     ]),
    ('argmax', 'tf.argmax(x, 1)',
     [
         'ArgMax/dimension<-',
         'ArgMax<-x:0,ArgMax/dimension:0',
     ]),
    ('cast_python', 'tf.cast(1.0, tf.int32)',
     [
         'Cast/x<-',
         'Cast<-Cast/x:0',
     ]),
    ('clip_by_value', 'tf.clip_by_value(x, 0.0, 1.0)',
     [
         'clip_by_value/Minimum/y<-',
         'clip_by_value/Minimum<-x:0,clip_by_value/Minimum/y:0',
         'clip_by_value/y<-',
         'clip_by_value<-clip_by_value/Minimum:0,clip_by_value/y:0',
     ]),
    ('split', 'tf.split(x, 3, axis=1); tf.split(x, [1, 2], axis=1)',
     [
         'split/split_dim<-',
         'split<-split/split_dim:0,x:0',
         'Const<-',
         'split_1/split_dim<-',
         'split_1<-x:0,Const:0,split_1/split_dim:0',
     ]),
    ('stack', 'tf.stack([1.0, 2.0]); tf.stack([x[0, 0], 2.0])',
     [
         'stack<-',
         'strided_slice/stack<-',
         'strided_slice/stack_1<-',
         'strided_slice/stack_2<-',
         'strided_slice<-x:0,strided_slice/stack:0,strided_slice/stack_1:0,strided_slice/stack_2:0',
         'stack_1/1<-',
         'stack_1<-strided_slice:0,stack_1/1:0',
     ]),
    ('zeros_ones', 'tf.zeros([2, 3]); tf.ones([2], tf.int32); tf.zeros([2000]); '
                   'tf.ones(tf.shape(xu)[:1])',
     [
         'zeros<-',
         'ones<-',
         'zeros_1/shape_as_tensor<-',
         'zeros_1/Const<-',
         'zeros_1<-zeros_1/shape_as_tensor:0,zeros_1/Const:0',
         'Shape<-xu:0',
         'strided_slice/stack<-',
         'strided_slice/stack_1<-',
         'strided_slice/stack_2<-',
         'strided_slice<-Shape:0,strided_slice/stack:0,strided_slice/stack_1:0,strided_slice/stack_2:0',
         'ones_1/Const<-',
         'ones_1<-strided_slice:0,ones_1/Const:0',
     ]),
    ('random', 'tf.random_normal([2, 3]); tf.random_uniform([2], 1.0, 2.0); '
               'tf.multinomial([[1.0, 1.0]], 2)',
     [
         'random_normal/shape<-',
         'random_normal/mean<-',
         'random_normal/stddev<-',
         'random_normal/RandomStandardNormal<-random_normal/shape:0',
         'random_normal/mul<-random_normal/RandomStandardNormal:0,random_normal/stddev:0',
         'random_normal<-random_normal/mul:0,random_normal/mean:0',
         'random_uniform/shape<-',
         'random_uniform/min<-',
         'random_uniform/max<-',
         'random_uniform/RandomUniform<-random_uniform/shape:0',
         'random_uniform/sub<-random_uniform/max:0,random_uniform/min:0',
         'random_uniform/mul<-random_uniform/RandomUniform:0,random_uniform/sub:0',
         'random_uniform<-random_uniform/mul:0,random_uniform/min:0',
         'multinomial/logits<-',
         'multinomial/Multinomial/num_samples<-',
         'multinomial/Multinomial<-multinomial/logits:0,multinomial/Multinomial/num_samples:0',
     ]),
    ('matmul_python', 'tf.matmul(m, [[1.0], [2.0], [3.0]])',
     [
         'MatMul/b<-',
         'MatMul<-m:0,MatMul/b:0',
     ]),
    ('activations_python', 'tf.nn.relu([1.0]); tf.nn.leaky_relu([1.0], 0.1); tf.nn.elu([1.0])',
     [
         'Relu/features<-',
         'Relu<-Relu/features:0',
         'LeakyRelu/features<-',
         'LeakyRelu<-LeakyRelu/features:0',
         'Elu/features<-',
         'Elu<-Elu/features:0',
     ]),
    ('identity_python', 'tf.identity(1.0)',
     [
         'Identity/input<-',
         'Identity<-Identity/input:0',
     ]),
    ('where_v2', 'tf.where_v2(b, x, 1.0)',
     ['SelectV2/e<-', 'SelectV2<-b:0,x:0,SelectV2/e:0']),
    ('xlogy_atan2', 'tf.math.xlogy(x, 2.0); tf.atan2(x, 1.0)',
     ['Xlogy/y<-', 'Xlogy<-x:0,Xlogy/y:0', 'Atan2/x<-', 'Atan2<-x:0,Atan2/x:0']),
    ('gather_nd', 'tf.gather_nd(x, [[0, 1]])',
     ['GatherNd/indices<-', 'GatherNd<-x:0,GatherNd/indices:0']),
    ('scatter_nd', 'tf.scatter_nd([[0]], [1.0], [3])',
     ['ScatterNd/indices<-', 'ScatterNd/updates<-', 'ScatterNd/shape<-',
      'ScatterNd<-ScatterNd/indices:0,ScatterNd/updates:0,ScatterNd/shape:0']),
    ('softmax_python', 'tf.nn.softmax([1.0, 2.0])',
     ['Const<-', 'Softmax<-Const:0']),
]


def _added_ops(src: str) -> list[str]:
    g = tf.Graph()
    with g.as_default():
        env = {
            "tf": tf,
            "x": tf.placeholder(tf.float32, [2, 3], name="x"),
            "xi": tf.placeholder(tf.int32, [2, 3], name="xi"),
            "b": tf.placeholder(tf.bool, [2, 3], name="b"),
            "m": tf.placeholder(tf.float32, [3, 3], name="m"),
            "xu": tf.placeholder(tf.float32, [None, 3], name="xu"),
            "v": tf.Variable(1.0, name="v"),
        }
        n0 = len(g.get_operations())
        exec(src, env)
        return [f"{op.name}<-{','.join(t.name for t in op.inputs)}"
                for op in g.get_operations()[n0:]]


@pytest.mark.parametrize(("label", "src", "expected"), CASES, ids=[c[0] for c in CASES])
def test_names_match_tensorflow(label, src, expected):
    assert _added_ops(src) == expected


def test_user_constant_keeps_the_name_const():
    """`x * 2.0` no longer takes `Const`, so the user's first constant is `Const:0`."""
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [2], name="x")
        y = x * 2.0
        c = tf.constant([5.0, 6.0])
        assert c.name == "Const:0"
        assert g.get_tensor_by_name("Const:0") is c
        assert g.get_tensor_by_name("mul/y:0") is y.op.inputs[1]
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y + c, {x: [1.0, 2.0]}), [7.0, 10.0])


def test_tensor_only_ops_open_no_scope():
    """With tensors only nothing is converted: no scope, and the op's name is the same."""
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [2], name="x")
        y = tf.add(x, x)
        assert y.op.name == "Add"
        assert [op.name for op in g.get_operations()] == ["x", "Add"]
        assert g.unique_name("Add/y", mark_as_used=False) == "Add/y"


def test_constant_goes_into_the_graph_of_the_tensor():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
    y = x * 2.0  # built outside `g.as_default()`
    assert y.graph is g and y.op.inputs[1].name == "mul/y:0"
    with tf.Session(graph=g) as sess:
        np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0]}), [2.0, 4.0])


def test_values_and_gradients_unchanged():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3], name="x")
        y = tf.reduce_sum(tf.clip_by_value(x * 2.0 - 1.0, 0.0, 3.0) ** 2.0)
        (g,) = tf.gradients(y, [x])
        with tf.Session() as sess:
            xv = np.array([0.2, 1.0, 3.0])
            yv, gv = sess.run([y, g], {x: xv})
        z = np.clip(2 * xv - 1, 0, 3)
        np.testing.assert_allclose(yv, np.sum(z ** 2))
        np.testing.assert_allclose(gv, np.where((2 * xv - 1 > 0) & (2 * xv - 1 < 3), 4 * z, 0))


def test_clip_by_norm_converts_clip_norm_where_tensorflow_does():
    """TensorFlow's constants of `clip_by_norm` (its ones_like part differs: OnesLike)."""
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        tf.clip_by_norm(x, 1.0)
        consts = {op.name for op in g.get_operations() if op.type == "Const"}
        assert {"clip_by_norm/Const", "clip_by_norm/Greater/y", "clip_by_norm/mul_1/y",
                "clip_by_norm/Maximum/y"} <= consts
        assert [t.name for t in g.get_operation_by_name("clip_by_norm/mul_1").inputs] == \
            ["x:0", "clip_by_norm/mul_1/y:0"]


def test_clip_by_global_norm_scope_matches_tensorflow():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        tf.clip_by_global_norm([x], 1.0)
        got = [f"{op.name}<-{','.join(t.name for t in op.inputs)}" for op in g.get_operations()
               if op.name.startswith("clip_by_global_norm/")]
    n = "global_norm/global_norm:0"
    s = "clip_by_global_norm"
    assert got == [
        f"{s}/truediv/x<-",
        f"{s}/truediv<-{s}/truediv/x:0,{n}",
        f"{s}/Const<-",
        f"{s}/truediv_1/y<-",
        f"{s}/truediv_1<-{s}/Const:0,{s}/truediv_1/y:0",
        f"{s}/Minimum<-{s}/truediv:0,{s}/truediv_1:0",
        f"{s}/mul/x<-",
        f"{s}/mul<-{s}/mul/x:0,{s}/Minimum:0",
        f"{s}/sub<-{n},{n}",
        f"{s}/add<-{s}/mul:0,{s}/sub:0",
        f"{s}/mul_1<-x:0,{s}/add:0",
        f"{s}/{s}/_0<-{s}/mul_1:0",
    ]
