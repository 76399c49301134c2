"""Op-contract cases for the ops of session 14's TF 1.x names: the generator's stateful
random ops and the ``*V2`` stateless samplers (`flowgraph/ops/random_stateful_ops.py`),
`RaggedFillEmptyRows`, the SDCA helpers and the proto codecs, in the ``(inputs, build,
options)`` form of `issue15_cov_cases.CONTRACT_CASES`; `tests/ops/test_op_contract.py`
runs them, and `GRADIENT_CASES` join `tests/ops/test_gradient_registry.CASES`.
"""

from __future__ import annotations

import numpy as np

import flowgraph as tf

R = np.random.RandomState(14)


def _f64(*shape):
    return R.uniform(-2.0, 2.0, size=shape)


def _generator(x):
    g = tf.random.Generator.from_seed(3)
    g.normal([2, 3])
    g.uniform([4], dtype=tf.float64)
    g.truncated_normal([3])
    g.uniform([2, 2], 0, 5, dtype=tf.int64)
    g.uniform_full_int([3], dtype=tf.int32)
    g.binomial([3], counts=5.0, probs=0.5)


def _stateful(x):
    v = tf.Variable(np.array([1, 0, 0], np.int64))
    alg = tf.constant(1, tf.int64)
    shape = tf.constant([2, 3], tf.int64)
    tf.raw_ops.StatefulStandardNormalV2(resource=v, algorithm=alg, shape=shape)
    tf.raw_ops.StatefulUniform(resource=v, algorithm=alg, shape=shape, dtype=tf.float64)
    tf.raw_ops.StatefulTruncatedNormal(resource=v, algorithm=alg, shape=shape)
    tf.raw_ops.StatefulUniformInt(resource=v, algorithm=alg, shape=shape,
                                  minval=tf.constant(0, tf.int64),
                                  maxval=tf.constant(7, tf.int64))
    tf.raw_ops.StatefulUniformFullInt(resource=v, algorithm=alg, shape=shape)
    tf.raw_ops.RngSkip(resource=v, algorithm=alg, delta=tf.constant(3, tf.int64))


def _ragged_fill(x):
    r = tf.ragged_fill_empty_rows(tf.constant([0, 0, 2, 2], tf.int64), x,
                                  tf.constant(4, tf.int64), tf.constant(0.5, x.dtype))
    tf.ragged_fill_empty_rows_grad(r.reverse_index_map, r.output_values)


def _sdca(x):
    tf.train.sdca_fprint(tf.constant(["a", "bc", ""]))
    v = tf.Variable([0.5, -0.05, 2.0])
    tf.train.sdca_shrink_l1([v], l1=0.1, l2=1.0)


def _sdca_solver(x):
    tf.train.sdca_optimizer(
        [tf.constant([0, 1], tf.int64)], [tf.constant([1, 0], tf.int64)],
        [tf.constant([1.0, 2.0])], [tf.constant([[0.5], [1.5]])], [1.0, 2.0], [1.0, 0.0],
        [tf.constant([7, 9], tf.int64)], [tf.constant([0.1, 0.2])], [tf.constant([0.3])],
        tf.zeros([2, 4]), "logistic_loss", l1=0.0, l2=1.0, num_loss_partitions=1,
        num_inner_iterations=1)


def _proto(x):
    from google.protobuf import descriptor_pb2

    fds = descriptor_pb2.FileDescriptorSet()
    fds.file.add().CopyFrom(descriptor_pb2.FileDescriptorProto.FromString(
        descriptor_pb2.DESCRIPTOR.serialized_pb))
    src = "bytes://" + fds.SerializeToString().decode("latin-1")
    msgs = [descriptor_pb2.FieldDescriptorProto(name=n, number=i).SerializeToString()
            for i, n in enumerate(["a", "b"])]
    sizes, values = tf.io.decode_proto(tf.constant(msgs), "google.protobuf.FieldDescriptorProto",
                                       ["name", "number"], [tf.string, tf.int32],
                                       descriptor_source=src)
    tf.io.encode_proto(sizes, values, ["name", "number"],
                       "google.protobuf.FieldDescriptorProto", descriptor_source=src)


GRADIENT_CASES = {
    "RaggedFillEmptyRows": [
        ([_f64(4), _f64()], lambda v, d: tf.ragged_fill_empty_rows(
            tf.constant([1, 1, 3, 3], tf.int64), v, tf.constant(5, tf.int64),
            d).output_values)],
}

# Output sizes that depend on the values, unknown statically in TensorFlow too.
VALUE_DEPENDENT = {"RaggedFillEmptyRows", "DecodeProtoV2"}

_INIT = {"init": True}
_UNKNOWN = {"value_dependent": True}  # TensorFlow leaves these shapes unknown too

CONTRACT_CASES: dict = {
    **{name: [([_f64(2)], _generator, _INIT)] for name in (
        "RngReadAndSkip", "StatelessRandomNormalV2", "StatelessRandomUniformV2",
        "StatelessTruncatedNormalV2", "StatelessRandomUniformIntV2",
        "StatelessRandomUniformFullIntV2", "StatefulRandomBinomial")},
    **{name: [([_f64(2)], _stateful, _INIT)] for name in (
        "StatefulStandardNormalV2", "StatefulUniform", "StatefulTruncatedNormal",
        "StatefulUniformInt", "StatefulUniformFullInt", "RngSkip")},
    "RaggedFillEmptyRows": [([_f64(4)], _ragged_fill, _UNKNOWN)],
    "RaggedFillEmptyRowsGrad": [([_f64(4)], _ragged_fill, {})],
    "SdcaFprint": [([_f64(2)], _sdca, _INIT)],
    "SdcaShrinkL1": [([_f64(2)], _sdca, _INIT)],
    "SdcaOptimizer": [([_f64(2)], _sdca_solver, {})],
    "DecodeProtoV2": [([_f64(2)], _proto, _UNKNOWN)],
    "EncodeProto": [([_f64(2)], _proto, {})],
}
