"""The MetaGraphDef messages and protobuf text reading of `flowgraph.framework.tf_formats`
(`meta_graph_messages`, `text_parse`, `meta_graph`)."""

import os

import pytest

from flowgraph.framework import errors
from flowgraph.framework.event_format import AttrValue, GraphDef, NodeDef, TensorProto
from flowgraph.framework.tf_formats.meta_graph import parse_meta_graph
from flowgraph.framework.tf_formats.meta_graph_messages import (
    CollectionDefProto,
    MetaGraphDefProto,
    SaverDefProto,
)
from flowgraph.framework.tf_formats.text_format import message_to_text
from flowgraph.framework.tf_formats.text_parse import TextParseError, parse_text

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tf_formats", "meta")


def test_tensorflow_meta_file_reencodes_to_the_same_bytes():
    """Every field TensorFlow wrote is declared, so the message round-trips exactly."""
    raw = open(os.path.join(DATA, "model.ckpt-3.meta"), "rb").read()
    mg = MetaGraphDefProto.FromString(raw)
    assert len(mg.meta_info_def.stripped_op_list.op) == 31
    assert MetaGraphDefProto.FromString(mg.SerializeToString()) == mg
    assert parse_text(message_to_text(mg), MetaGraphDefProto) == mg


def test_text_parser_reads_protobuf_text_forms():
    text = r'''
        # a comment
        name: "a\"b\001\x41" 'c'  op: "Const"
        input: ["x", "y"] input: "z";
        attr < key: "dtype" value: { type: DT_INT64_REF } >
        attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: [1.5, -inf]
                                             unknown_field { deep { x: 1 } } } } }
    '''
    node = parse_text(text, NodeDef)
    assert node.name == 'a"b\x01Ac' and list(node.input) == ["x", "y", "z"]
    assert node.attr["dtype"].type == 109
    assert node.attr["value"].tensor.float_val == [1.5, float("-inf")]
    saver = parse_text("version: V2 max_to_keep: 0x10 keep_checkpoint_every_n_hours: 2.5",
                       SaverDefProto)
    assert (saver.version, saver.max_to_keep, saver.keep_checkpoint_every_n_hours) == \
        (2, 16, 2.5)


@pytest.mark.parametrize("text, match", [
    ('name: 5', "expected a string"),
    ('name: "x', "unexpected character"),
    ('attr { key: "a" value { type: DT_NOPE } }', "unknown enum value DT_NOPE"),
    ('attr {' * 100, "unexpected end of the text"),
    ('input: "a" }', "expected a field name"),
    ('attr { key: "a" value { i: 99999999999999999999999 } }', "out of range for a int64"),
    ('attr { key: "a" value { tensor { int_val: 2147483648 } } }', "out of range for a int32"),
])
def test_text_parser_errors_say_where(text, match):
    with pytest.raises(TextParseError, match=match):
        parse_text(text, NodeDef)


def test_parse_meta_graph_names_the_source_and_bounds_constants():
    with pytest.raises(errors.DataLossError, match=r"my\.meta.*not the binary form"):
        parse_meta_graph(b"\xff\xfe garbage", "my.meta")
    big = NodeDef(name="c", op="Const", attr={"value": AttrValue(tensor=TensorProto(
        dtype=1, tensor_shape=parse_text("dim { size: 4096 } dim { size: 4096 }",
                                         TensorProto._BY_NAME["tensor_shape"][2]),
        float_val=[0.0]))})
    data = MetaGraphDefProto(graph_def=GraphDef(node=[big])).SerializeToString()
    with pytest.raises(errors.DataLossError, match=r"node 'c' \(Const\).*\[4096, 4096\]"):
        parse_meta_graph(data, "big.meta")
    col = CollectionDefProto(int64_list=CollectionDefProto.Int64List(value=[1, -2]))
    assert list(CollectionDefProto.FromString(col.SerializeToString()).int64_list.value) == \
        [1, -2]
