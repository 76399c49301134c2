"""Every public callable takes TensorFlow 1.x's arguments: the same names (a keyword call
works), the same positional order (a positional call binds the same way) and the same
literal defaults, as recorded from TF 2.15's ``tf.compat.v1`` in tools/tf1_signatures.json
(``tools/api_signatures.py``). The differences left are listed here with their reason; a
new one fails, and so does a listed one that no longer differs. No class may lack a
member TF's has beyond the gaps accepted in tools/tf1_member_gaps.json."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

import flowgraph as tf

_TOOL = pathlib.Path(__file__).resolve().parents[2] / "tools" / "api_signatures.py"
_spec = importlib.util.spec_from_file_location("api_signatures", _TOOL)
api_signatures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_signatures)

# name -> why it differs. Internal constructors users do not call, DTensor-only or
# TF-2-only arguments, and defaults that mean the same thing.
KNOWN = {
    "data.Iterator": "built by make_*_iterator / from_structure, not by users",
    "tf.RaggedTensor": "built by tf.RaggedTensor.from_* (TF: internal constructor)",
    "tf.ReaderBase": "a base class; readers are built by their subclasses",
    "tf.fill": "`layout` is DTensor's (TF 2 only)",
    "tf.ones": "`layout` is DTensor's (TF 2 only)",
    "tf.zeros": "`layout` is DTensor's (TF 2 only)",
    "tf.function": "TF 2's compilation options after `autograph` are keyword-only here",
    "keras.Input": "`ragged`/`type_spec` (TF 2) absent; `batch_shape` taken instead",
    "nn.max_pool2d": "takes TF 1's `value` first and TF 2's `input` as a keyword",
    "sparse.add": "threshold 0 (TF: None, meaning 0)",
    "tf.sparse_add": "threshold 0 (TF: None, meaning 0)",
    "strings.reduce_join": "keep_dims False (TF: None, meaning False)",
    "tf.reduce_join": "keep_dims False (TF: None, meaning False)",
    "tf.numpy_function": "func/inp/Tout required (TF: None defaults that it then refuses)",
    "tf.py_function": "func/inp/Tout required (TF: None defaults that it then refuses)",
}


def _owner(line: str) -> str:
    return line.split(":", 1)[0].split("(", 1)[0]


@pytest.fixture(scope="module")
def differences():
    return api_signatures.compare()


@pytest.mark.parametrize("kind", ["missing", "order", "default", "required"])
def test_signatures_match_tensorflow_1(differences, kind):
    unexplained = [line for line in differences[kind] if _owner(line) not in KNOWN]
    assert unexplained == [], f"{kind} differences from TF 1.x's signatures"


def test_every_listed_difference_still_exists(differences):
    listed = {_owner(line) for lines in differences.values() for line in lines}
    assert sorted(set(KNOWN) - listed) == []


def test_no_class_loses_a_member_tensorflow_1_has():
    # tools/tf1_member_gaps.json: the members (of TF 2.15's compat.v1 classes) flowgraph
    # lacked when last accepted, mostly TF 2 only; any other missing member fails here.
    import json

    accepted = json.loads(api_signatures.MEMBER_GAPS.read_text())["gaps"]
    new = {key: sorted(set(missing) - set(accepted.get(key, ())))
           for key, missing in api_signatures.missing_members().items()}
    assert {key: missing for key, missing in new.items() if missing} == {}


def test_renamed_arguments_take_either_name():
    # TF 2.15 keeps the old and the new name of these arguments; giving both is an error.
    with tf.Graph().as_default():
        assert tf.strings.to_number(string_tensor=["1"]).dtype == tf.float32
        assert tf.string_to_number(input=["2"], out_type=tf.int32).dtype == tf.int32
        assert tf.strings.to_hash_bucket(input=["a"], num_buckets=3).dtype == tf.int64
        assert tf.count_nonzero(input=[0, 1, 2]).dtype == tf.int64
        with pytest.raises(ValueError, match="Cannot specify both"):
            tf.string_to_number(["1"], input=["2"])
        assert tf.string_split(["a,b"], ",").values.dtype == tf.string  # sep comes second


# -- what the signature fixes make work (values printed by TF 2.15 under the tf-oracle) --
@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_layer_constructors_take_tf1_positions_and_defaults(graph):
    assert tf.layers.SeparableConv1D(2, 1).strides == (1,)  # raised before
    x = tf.ones([1, 8, 3])
    assert tf.layers.SeparableConv1D(4, 3, 2)(x).shape.as_list() == [1, 3, 4]
    deconv = tf.layers.Conv2DTranspose(2, 3, 2, "same", "channels_last", tf.nn.relu)
    assert deconv.activation is tf.nn.relu and deconv.data_format == "channels_last"
    deconv3 = tf.layers.Conv3DTranspose(2, 1, 1, "valid", "channels_last", tf.nn.relu)
    assert deconv3.activation is tf.nn.relu


def test_stateless_samplers_build_tf_2_15_graph_and_take_alg(graph):
    a = tf.random.stateless_normal([3], seed=[1, 2])
    d = tf.random.stateless_uniform([3], seed=[1, 2], minval=0, maxval=10, dtype=tf.int32)
    layout = [(o.name, o.type) for o in graph.get_operations()]
    assert layout[:9] == [
        ("stateless_random_normal/shape", "Const"), ("stateless_random_normal/mean", "Const"),
        ("stateless_random_normal/stddev", "Const"),
        ("stateless_random_normal/StatelessRandomGetKeyCounter/seed", "Const"),
        ("stateless_random_normal/StatelessRandomGetKeyCounter",
         "StatelessRandomGetKeyCounter"),
        ("stateless_random_normal/StatelessRandomNormalV2/alg", "Const"),
        ("stateless_random_normal/StatelessRandomNormalV2", "StatelessRandomNormalV2"),
        ("stateless_random_normal/mul", "Mul"), ("stateless_random_normal", "AddV2")]
    assert layout[-2:] == [("stateless_random_uniform/alg", "Const"),
                           ("stateless_random_uniform", "StatelessRandomUniformIntV2")]
    philox = tf.random.stateless_normal([2], seed=[1, 2], alg="philox")
    threefry = tf.random.stateless_normal([2], seed=[1, 2], alg="threefry")
    with tf.Session() as sess:
        got_a, got_d, got_p = sess.run([a, d, philox])
        with pytest.raises(tf.errors.InvalidArgumentError, match="ThreeFry"):
            sess.run(threefry)
    np.testing.assert_allclose(got_a, [0.5441, 0.2074, 0.0736], atol=5e-5)
    assert got_d.tolist() == [0, 9, 4]
    np.testing.assert_allclose(got_p, [0.5441, 0.2074], atol=5e-5)
    with pytest.raises(ValueError, match="unsupported value"):
        tf.random.stateless_uniform([2], seed=[1, 2], alg="mersenne")


def test_shared_embeddings_without_the_safe_lookup(graph):
    fc = tf.feature_column
    a = fc.categorical_column_with_identity("a", 4)
    b = fc.categorical_column_with_identity("b", 4)
    feats = {"a": tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0]],
                                  tf.constant([1, 2, 3, 0], tf.int64), [3, 2]),
             "b": tf.SparseTensor([[0, 0], [1, 0], [2, 1]], tf.constant([3, 1, 2], tf.int64),
                                  [3, 2])}
    init = tf.constant_initializer([[0.1 * i + j for j in range(2)] for i in range(4)])
    shared = fc.shared_embedding_columns([a, b], 2, initializer=init, combiner="sum",
                                         use_safe_embedding_lookup=False)
    cols = [fc.embedding_column(a, 2, initializer=init, use_safe_embedding_lookup=False),
            *shared]
    out = fc.input_layer(feats, cols)
    assert "SparseFillEmptyRows" not in {o.type for o in graph.get_operations()}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(out)
    np.testing.assert_allclose(got, [[0.15, 1.15, 0.3, 2.3, 0.3, 1.3],
                                     [0.3, 1.3, 0.3, 1.3, 0.1, 1.1],
                                     [0.0, 1.0, 0.0, 1.0, 0.2, 1.2]], rtol=1e-6)


def test_text_file_initializer_offset_and_table_flags(graph, tmp_path):
    vocab = tmp_path / "v.txt"
    vocab.write_text("a\nb\nc\n")
    line, whole = tf.lookup.TextFileIndex.LINE_NUMBER, tf.lookup.TextFileIndex.WHOLE_LINE
    t1 = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        str(vocab), tf.string, whole, tf.int64, line, value_index_offset=5), -1,
        experimental_is_anonymous=False)
    t2 = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        str(vocab), tf.int64, line, tf.string, whole, value_index_offset=5), "?")
    t3 = tf.lookup.StaticVocabularyTable(tf.lookup.TextFileInitializer(
        str(vocab), tf.string, whole, tf.int64, line), 1, experimental_is_anonymous=False)
    inits = [o for o in graph.get_operations() if o.type == "InitializeTableFromTextFileV2"]
    assert [o.get_attr("offset") for o in inits] == [5, 5, 0]
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        got = sess.run([t1.lookup(tf.constant(["a", "c", "z"])),
                        t2.lookup(tf.constant([0, 5, 7], tf.int64)),
                        t3.lookup(tf.constant(["c", "q"]))])
    assert got[0].tolist() == [5, 7, -1]
    assert got[1].tolist() == [b"?", b"a", b"c"]
    assert got[2].tolist() == [2, 3]


def test_small_argument_fixes(graph, tmp_path):
    image = tf.zeros([2, 3, 1])
    assert tf.image.transpose(image).name == "transpose/transpose:0"
    assert tf.image.transpose(image, name="tt").name == "tt/tt:0"
    x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    pooled, argmax = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID",
                                                "NHWC", tf.int32, "mpa")
    assert pooled.name == "mpa:0" and argmax.dtype == tf.int32
    _, index64 = tf.math.top_k([3.0, 1.0, 2.0], 2, index_type=tf.int64)
    signature = tf.map_fn(lambda r: tf.cast(tf.reduce_sum(r), tf.int32), x[0, :, :, 0],
                          fn_output_signature=tf.TensorSpec([], tf.int32))
    sizes = tf.nn.conv3d_backprop_filter(tf.ones([1, 2, 2, 2, 1]), [1, 1, 1, 1, 1],
                                         tf.ones([1, 2, 2, 2, 1]), [1] * 5, "VALID")
    with tf.variable_op_scope([], "vos", constraint=lambda v: v * 0):
        var = tf.get_variable("v", [2])
    assert var.constraint is not None
    with tf.Session() as sess:
        assert sess.run(argmax).ravel().tolist() == [5, 7, 13, 15]
        assert sess.run(index64).tolist() == [0, 2] and index64.dtype == tf.int64
        assert sess.run(signature).tolist() == [6, 22, 38, 54]
        assert float(sess.run(sizes).sum()) == 8.0
    step = tf.train.get_or_create_global_step()
    bump = step.assign_add(1)
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                           save_graph_def=False) as sess:
        sess.run(bump)
    written = sorted(p.name for p in tmp_path.iterdir() if "tfevents" not in p.name)
    assert written == ["checkpoint", "model.ckpt-0.data-00000-of-00001", "model.ckpt-0.index",
                       "model.ckpt-1.data-00000-of-00001", "model.ckpt-1.index"]
