"""The protobuf codec (`flowgraph.framework.proto_codec`), the event and graph messages
(`flowgraph.framework.event_messages`) and `event_format`, which re-exports both: one
class per message, whichever module it is imported from, and both engines honouring a
message's own idea of which sub-messages are set (`Message._present`)."""

from __future__ import annotations

import doctest

import pytest

from flowgraph.framework import (
    event_format,
    event_messages,
    example_proto,
    proto_codec,
    tf_messages,
)
from flowgraph.framework.tf_formats import meta_graph_messages as mgm


@pytest.mark.parametrize("module", [proto_codec, event_messages, event_format])
def test_module_examples_run(module):
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0, module.__name__


def test_event_format_re_exports_one_class_per_name():
    for module in (proto_codec, event_messages):
        for name in module.__all__:
            assert getattr(event_format, name) is getattr(module, name), name
            assert name in event_format.__all__, name


def test_one_log_message_and_one_decode_error():
    assert tf_messages.LogMessage is event_format.LogMessage
    assert example_proto.DecodeError is proto_codec.DecodeError
    assert issubclass(example_proto.DecodeError, ValueError)


class _Inner(proto_codec.Message):
    FIELDS = ((1, "n", "int32", False),)


class _Outer(proto_codec.Message):
    """A message that counts `inner` as unset while it is empty."""

    FIELDS = ((1, "inner", _Inner, False), (2, "tag", "string", False))

    def _present(self, name):
        if name == "inner":
            return "inner" in self.__dict__ and self.__dict__["inner"].n != 0
        return super()._present(name)


@pytest.mark.parametrize("engine", ["protobuf", "hand"])
def test_both_engines_skip_a_sub_message_the_class_calls_unset(engine, monkeypatch):
    if engine == "hand":
        monkeypatch.setenv("FLOWGRAPH_PROTOBUF", "0")
    else:
        pytest.importorskip("google.protobuf")
        monkeypatch.delenv("FLOWGRAPH_PROTOBUF", raising=False)
    assert _Outer(inner=_Inner(), tag="a").SerializeToString() == b"\x12\x01a"
    assert _Outer(inner=_Inner(n=2)).SerializeToString() == b"\n\x02\x08\x02"


def test_meta_info_def_is_nested_in_meta_graph_def():
    pe = pytest.importorskip("flowgraph.framework.protobuf_engine")
    assert mgm.MetaGraphDefProto.MetaInfoDef is mgm.MetaInfoDefProto
    descriptor = pe.message_class(mgm.MetaInfoDefProto).DESCRIPTOR
    assert descriptor.full_name == "tensorflow.MetaGraphDef.MetaInfoDef"
    assert descriptor.containing_type.full_name == "tensorflow.MetaGraphDef"
    assert pe.message_class(tf_messages.LogMessage).DESCRIPTOR.full_name == \
        "tensorflow.LogMessage"


def test_list_fields_leaves_out_defaults_and_empty_repeated_fields():
    from flowgraph.framework.event_messages import TensorShapeProto

    shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=-1), TensorShapeProto.Dim(size=3)])
    assert [(f.name, f.number) for f, _ in shape.ListFields()] == [("dim", 2)]
    assert TensorShapeProto(unknown_rank=False).ListFields() == []
    info = mgm.TensorInfoProto(name="x:0", dtype=1, tensor_shape=shape)
    fields = info.ListFields()
    assert [f.name for f, _ in fields] == ["name", "dtype", "tensor_shape"]
    assert fields[0][1] == "x:0" and fields[2][1] is info.tensor_shape


def test_tensor_shape_accepts_a_tensor_shape_proto():
    import flowgraph as tf
    from flowgraph.framework.event_messages import TensorShapeProto

    proto = TensorShapeProto(dim=[TensorShapeProto.Dim(size=-1), TensorShapeProto.Dim(size=3)])
    assert tf.TensorShape(proto).as_list() == [None, 3]
    assert tf.TensorShape(TensorShapeProto(unknown_rank=True)).rank is None
    assert tf.TensorShape(TensorShapeProto()).as_list() == []
