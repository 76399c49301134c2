"""The two engines of flowgraph's messages: the ``protobuf`` package (descriptors built
from each class's ``FIELDS`` by `flowgraph.framework.protobuf_engine`) and the hand codec
of `flowgraph.framework.event_format` (``FLOWGRAPH_PROTOBUF=0``).

For every `Message` class in the package, a message with a value in every field (zeros,
negatives, maps, nested and repeated messages) must give the same bytes under both, each
engine must read the other's bytes back, and malformed bytes must be a DecodeError under
both. TensorFlow's committed fixtures (tests/data/tf_formats) must read the same.
"""

import doctest
import glob
import importlib
import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

pytest.importorskip("google.protobuf")

import flowgraph as tf
from flowgraph.framework import event_format as ef
from flowgraph.framework import example_proto
from flowgraph.framework import protobuf_engine as pe
from flowgraph.framework.tf_formats.table import read_table

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "tf_formats"


def _message_classes():
    """Every Message subclass of the package: the modules that import `Message` are
    imported first (found by their source, so a new module is picked up)."""
    for path in sorted((ROOT / "flowgraph").rglob("*.py")):
        text = path.read_text()
        if "Message" in text and "event_format import" in text and "class " in text:
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            importlib.import_module(module)
    out, todo = [], list(ef.Message.__subclasses__())
    while todo:
        cls = todo.pop()
        # GraphDefDict (what as_graph_def() returns) is a dict view over a GraphDef
        # message, not a message declaration of its own
        if cls.__module__.startswith("flowgraph.") and cls not in out and \
                not issubclass(cls, dict):
            out.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(out, key=lambda c: (c.__module__, c.__qualname__))


CLASSES = _message_classes()
_DECODE_ERRORS = (ef.DecodeError, example_proto.DecodeError)


@pytest.fixture(autouse=True)
def _protobuf_engine_by_default(monkeypatch):
    monkeypatch.delenv("FLOWGRAPH_PROTOBUF", raising=False)


@pytest.fixture
def hand(monkeypatch):
    """Run the block with the hand codec: ``with hand(): ...``."""
    class _Hand:
        def __enter__(self):
            monkeypatch.setenv("FLOWGRAPH_PROTOBUF", "0")

        def __exit__(self, *exc):
            monkeypatch.delenv("FLOWGRAPH_PROTOBUF", raising=False)
    return _Hand


# -- a value in every field --------------------------------------------------------------
_SCALARS = {  # (a value, its zero); floats exact in float32
    "double": (-2.5e300, 0.0), "float": (-0.375, 0.0), "int32": (-7, 0),
    "int64": (-(1 << 40), 0), "uint64": ((1 << 63) + 5, 0), "enum": (3, 0),
    "bool": (True, False), "string": ("h\u00e9 \u2603", ""), "bytes": (b"\x00\xff ab", b""),
}
_KEYS = {"string": ["b", "Tidx", "a", "T", "\u00e9", ""], "int32": [2, -1, 0, 7]}


def _filled(cls, depth=0):
    msg = cls()
    for number, name, kind, repeated in cls.FIELDS:
        if isinstance(kind, tuple):
            _, key_kind, value_kind = kind
            for i, key in enumerate(_KEYS[key_kind]):
                if isinstance(value_kind, type):
                    value = _filled(value_kind, depth + 1) if i % 2 else value_kind()
                else:
                    value = _SCALARS[value_kind][i % 2]
                getattr(msg, name)[key] = value
        elif isinstance(kind, type):
            if depth > 2:
                continue
            if repeated:
                getattr(msg, name).extend([_filled(kind, depth + 1), kind()])
            else:
                setattr(msg, name, _filled(kind, depth + 1) if number % 3 else kind())
        elif repeated:
            value, zero = _SCALARS[kind]
            values = [value, zero, value]
            if kind in ("int32", "int64", "enum"):
                values.append(-1)
            getattr(msg, name).extend(values)
        else:  # every third singular field set to its zero: it must still be written
            setattr(msg, name, _SCALARS[kind][number % 3 == 0])
    return msg


def _hand_bytes(msg, hand):
    with hand():
        return msg.SerializeToString()


def test_every_message_class_is_found():
    names = {f"{c.__module__}.{c.__qualname__}" for c in CLASSES}
    assert len(CLASSES) >= 49, sorted(names)
    assert "flowgraph.framework.tf_formats.bundle.BundleEntryProto" in names
    assert "flowgraph.framework.example_proto.SequenceExample" in names


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__[10:]}.{c.__qualname__}")
def test_both_engines_write_and_read_the_same_bytes(cls, hand):
    msg = _filled(cls)
    data = _hand_bytes(msg, hand)
    assert pe.serialize(msg) == data
    if cls.FIELDS:
        assert data  # the filler reached every class's fields
    from_protobuf = cls.FromString(data)  # protobuf engine reads the codec's bytes
    with hand():
        from_hand = cls.FromString(pe.serialize(msg))  # and the codec protobuf's
        assert from_protobuf.SerializeToString() == data
        assert from_hand.SerializeToString() == data
        assert from_protobuf == from_hand == msg
    assert cls.from_protobuf(msg.to_protobuf()).SerializeToString() == data


@pytest.mark.parametrize("cls", [c for c in CLASSES if c.FIELDS],
                         ids=lambda c: f"{c.__module__[10:]}.{c.__qualname__}")
def test_malformed_bytes_are_a_decode_error_under_both_engines(cls, hand):
    number, _, kind, _ = cls.FIELDS[0]
    wire = 2 if not isinstance(kind, str) or kind in ("string", "bytes") else \
        {"double": 1, "float": 5}.get(kind, 0)
    wrong = {0: (1, bytes(8)), 1: (5, bytes(4)), 5: (1, bytes(8)), 2: (0, b"\x01")}[wire]
    cases = {
        "truncated": _hand_bytes(_filled(cls), hand)[:-1],
        "wrong wire type": ef.write_varint(number << 3 | wrong[0]) + wrong[1],
        "huge length": ef.write_varint(number << 3 | 2) + ef.write_varint(1 << 40) + b"ab",
        "field number 0": b"\x00\x01",
        "group": ef.write_varint(number << 3 | 3) + ef.write_varint(number << 3 | 4),
    }
    for what, data in cases.items():
        for engine in ("protobuf", "hand"):
            if engine == "hand":
                with hand(), pytest.raises(_DECODE_ERRORS) as info:
                    cls.FromString(data)
            else:
                with pytest.raises(_DECODE_ERRORS) as info:
                    cls.FromString(data)
            assert cls.__name__ in str(info.value) or engine == "hand", (what, engine)


def test_decode_error_names_the_type_and_is_data_loss():
    with pytest.raises(ef.DecodeError, match=r"GraphDef: .*field 'node' \(number 1\) of "
                                             r"tensorflow.GraphDef has wire type 0"):
        ef.GraphDef.FromString(b"\x08\x01")
    with pytest.raises(tf.errors.DataLossError, match="truncated or corrupt"):
        ef.Event.FromString(b"\x2a\x80\x80\x80\x80\x02" + bytes(16))


# -- specific behaviour ------------------------------------------------------------------
def test_map_entries_are_written_in_tensorflows_order(hand):
    node = ef.NodeDef(name="n", attr={"Tidx": ef.AttrValue(i=1), "T": ef.AttrValue(i=2)})
    keys = [k for k in ef.NodeDef.FromString(node.SerializeToString()).attr]
    assert keys == ["T", "Tidx"]  # C++ order; upb's own map order would put Tidx first
    assert _hand_bytes(node, hand) == node.SerializeToString()
    job = tf.train.JobDef(name="w", tasks={3: "c", -1: "a", 0: "b"})
    assert list(tf.train.JobDef.FromString(job.SerializeToString()).tasks) == [-1, 0, 3]


def test_set_zero_is_written_and_unset_is_not():
    assert ef.Summary.Value(simple_value=0.0).SerializeToString() == b"\x15\x00\x00\x00\x00"
    assert ef.Summary.Value().SerializeToString() == b""
    assert not ef.Summary.Value.FromString(b"").HasField("simple_value")


def test_invalid_utf8_in_a_string_field_is_not_a_crash(hand):
    data = b"\x0a\x02\xff\xfe"  # NodeDef.name
    assert ef.NodeDef.FromString(data).name == "\ufffd\ufffd"
    node = ef.NodeDef(name=b"\xff\xfe")  # stored as bytes: written as they are
    assert node.SerializeToString() == data == _hand_bytes(node, hand)
    with pytest.raises(pe.Unrepresentable, match="'name'"):
        node.to_protobuf()


def test_values_the_codec_coerces_are_coerced(hand):
    msg = ef.TensorProto(dtype=np.int32(1), int_val=[np.int64(3), True], float_val=[1],
                         string_val=["s"], tensor_content=b"x")
    assert pe.serialize(msg) == _hand_bytes(msg, hand)
    out_of_range = ef.VersionDef(producer=1 << 31)  # int32 field: codec writes it anyway
    assert out_of_range.SerializeToString() == _hand_bytes(out_of_range, hand)
    assert ef.VersionDef.FromString(out_of_range.SerializeToString()).producer == -(1 << 31)


def test_unknown_fields_are_skipped_by_both(hand):
    data = ef.VersionDef(producer=3).SerializeToString() + b"\xf8\x01\x05"  # field 31
    with hand():
        assert ef.VersionDef.FromString(data).producer == 3
    assert ef.VersionDef.FromString(data).producer == 3


def test_merge_merges_sub_messages_and_extends_lists():
    msg = ef.Event(summary=ef.Summary(value=[ef.Summary.Value(tag="a")]), step=1)
    msg.MergeFromString(ef.Event(step=2, summary=ef.Summary(
        value=[ef.Summary.Value(tag="b")])).SerializeToString())
    assert (msg.step, [v.tag for v in msg.summary.value]) == (2, ["a", "b"])


def test_protobuf_names_and_text_and_json_formats():
    from google.protobuf import json_format, text_format

    assert pe.message_class(ef.Summary.Value).DESCRIPTOR.full_name == "tensorflow.Summary.Value"
    assert pe.message_class(tf.train.Example).DESCRIPTOR.full_name == "tensorflow.Example"
    graph = ef.GraphDef(node=[ef.NodeDef(name="x", op="Const",
                                         attr={"dtype": ef.AttrValue(type=1)})])
    text = text_format.MessageToString(graph.to_protobuf())
    assert 'name: "x"' in text and 'key: "dtype"' in text
    back = text_format.Parse(text, pe.message_class(ef.GraphDef)())
    assert ef.GraphDef.from_protobuf(back) == graph
    as_json = json_format.MessageToDict(graph.to_protobuf())
    assert as_json["node"][0]["attr"] == [{"key": "dtype", "value": {"type": "DT_FLOAT"}}]


def test_from_protobuf_takes_tensorflows_compiled_messages():
    graph_pb2 = pytest.importorskip("tensorboard.compat.proto.graph_pb2")
    official = graph_pb2.GraphDef()
    node = official.node.add(name="c", op="Const")
    node.attr["T"].type = 1
    ours = ef.GraphDef.from_protobuf(official)
    assert (ours.node[0].name, ours.node[0].attr["T"].type) == ("c", 1)
    with pytest.raises(TypeError, match="expects a protobuf message"):
        ef.GraphDef.from_protobuf(ours)


def test_local_classes_get_their_own_names():
    def make():
        class Local(ef.Message):
            FIELDS = ((1, "x", "int32", False),)
        return Local
    a, b = make(), make()
    assert pe.message_class(a).DESCRIPTOR.full_name != pe.message_class(b).DESCRIPTOR.full_name
    assert b.FromString(a(x=-4).SerializeToString()).x == -4


def test_module_examples_run():
    for module in (ef, pe):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, module.__name__


# -- TensorFlow's files ------------------------------------------------------------------
def _fixture_messages():
    from flowgraph.framework.tf_formats.bundle import BundleEntryProto, BundleHeaderProto
    from flowgraph.framework.tf_formats.meta_graph_messages import (
        MetaGraphDefProto,
        SavedModelProto,
    )

    for path in sorted(DATA.rglob("*.pb")):
        cls = SavedModelProto if path.name == "saved_model.pb" else ef.GraphDef
        yield str(path.relative_to(DATA)), cls, path.read_bytes()
    for path in sorted(DATA.rglob("*.meta")):
        yield str(path.relative_to(DATA)), MetaGraphDefProto, path.read_bytes()
    for path in sorted(DATA.rglob("*.index")):
        for key, value in read_table(path.read_bytes()):
            cls = BundleEntryProto if key else BundleHeaderProto
            yield f"{path.relative_to(DATA)}[{key.decode(errors='backslashreplace')}]", cls, value


def test_tensorflow_fixtures_read_the_same_under_both_engines(hand):
    seen = 0
    for where, cls, data in _fixture_messages():
        ours = cls.FromString(data)
        with hand():
            theirs = cls.FromString(data)
            hand_bytes = theirs.SerializeToString()
            assert ours.SerializeToString() == hand_bytes, where
        assert ours.SerializeToString() == hand_bytes, where
        seen += 1
    assert seen > 20


_FORMAT_TESTS = [
    ("test_tf_graph_def_format.py", "test_tensorflow_graph_def_round_trips_byte_for_byte",
     {"name": "ops.pb"}),
    ("test_tf_meta_graph_format.py", "test_tensorflow_meta_file_reencodes_to_the_same_bytes",
     {}),
    ("test_tf_checkpoint_format.py", "test_written_bundle_matches_tensorflows_bytes",
     {"tmp_path": None}),
    ("test_example_proto.py", "test_example_bytes_match_tensorflow", {}),
    ("test_example_proto.py", "test_parse_tensorflow_bytes", {}),
    ("test_tf_formats_official_protobuf.py", "test_written_graph_def_is_official_bytes",
     {"tmp_path": None}),
]


@pytest.mark.parametrize("engine", ["protobuf", "hand"])
@pytest.mark.parametrize("file,name,kwargs", _FORMAT_TESTS, ids=[t[1] for t in _FORMAT_TESTS])
def test_format_tests_pass_under_both_engines(file, name, kwargs, engine, hand, tmp_path):
    """A subset of the byte-equality tests of the format modules, run under each engine
    (the whole modules run under the hand codec in the slow test below)."""
    spec = importlib.util.spec_from_file_location(f"_engine_{file[:-3]}",
                                                  ROOT / "tests" / "framework" / file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # may skip (tensorboard's protos missing)
    kwargs = {k: (tmp_path if k == "tmp_path" else v) for k, v in kwargs.items()}
    if engine == "hand":
        with hand():
            getattr(module, name)(**kwargs)
    else:
        getattr(module, name)(**kwargs)


@pytest.mark.slow
def test_all_format_test_modules_pass_under_the_hand_codec():
    files = sorted(glob.glob(str(ROOT / "tests" / "framework" / "test_tf_*.py")))
    files.append(str(ROOT / "tests" / "framework" / "test_example_proto.py"))
    env = dict(os.environ, FLOWGRAPH_PROTOBUF="0")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                          *files], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


# -- whole files: a checkpoint and an event file -----------------------------------------
_WRITE_FILES = textwrap.dedent("""
    import os, sys, time
    time.time = lambda: 1700000000.25
    import numpy as np
    import flowgraph as tf
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "ckpt"))
    with tf.Graph().as_default():
        v = tf.Variable([[1.0, -2.0]], name="v")
        s = tf.Variable([b"a", b"bc"], name="s")
        step = tf.train.get_or_create_global_step()
        tf.summary.scalar("loss", tf.reduce_sum(v))
        tf.summary.histogram("v", v)
        merged = tf.summary.merge_all()
        saver = tf.train.Saver(format="tensorflow")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            writer = tf.summary.FileWriter(os.path.join(out, "logs"), sess.graph)
            writer.add_summary(sess.run(merged), 3)
            writer.close()
            path = saver.save(sess, os.path.join(out, "ckpt", "model"), global_step=3)
            sess.run(v.assign([[0.0, 0.0]]))
            saver.restore(sess, path)
            assert sess.run(v).tolist() == [[1.0, -2.0]]
    if os.environ.get("FLOWGRAPH_PROTOBUF") == "0":
        assert "google.protobuf" not in sys.modules, "the hand codec imported protobuf"
""")


def _files(root):
    out = {}
    for path in sorted(pathlib.Path(root).rglob("*")):
        if path.is_file() and path.name != "checkpoint":  # the state file holds paths
            out[str(path.relative_to(root))] = path.read_bytes()
    return out


def test_checkpoint_and_event_files_are_the_same_bytes_under_both_engines(tmp_path,
                                                                          monkeypatch):
    script = tmp_path / "write.py"
    script.write_text(_WRITE_FILES)
    env = dict(os.environ, FLOWGRAPH_PROTOBUF="0")
    run = subprocess.run([sys.executable, str(script), str(tmp_path / "hand")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    monkeypatch.delenv("FLOWGRAPH_PROTOBUF", raising=False)
    monkeypatch.setattr(time, "time", lambda: 1700000000.25)
    namespace = {"__name__": "_write_files"}
    monkeypatch.setattr(sys, "argv", ["write.py", str(tmp_path / "protobuf")])
    exec(compile(_WRITE_FILES, "write.py", "exec"), namespace)
    monkeypatch.undo()
    hand_files, protobuf_files = _files(tmp_path / "hand"), _files(tmp_path / "protobuf")
    assert sorted(hand_files) == sorted(protobuf_files)
    assert any("tfevents" in name for name in hand_files)
    assert any(name.endswith(".index") for name in hand_files)
    for name, data in hand_files.items():
        assert protobuf_files[name] == data, name


def test_without_protobuf_the_hand_codec_writes_the_same_bytes():
    """``import flowgraph`` does not import protobuf; with protobuf unimportable the hand
    codec is used, and to_protobuf() says what to install."""
    node = ef.NodeDef(name="n", op="Const", attr={"dtype": ef.AttrValue(type=1)})
    code = textwrap.dedent("""
        import sys
        import flowgraph
        assert "google.protobuf" not in sys.modules, "import flowgraph imported protobuf"
        sys.modules["google.protobuf"] = None  # as if it were not installed
        from flowgraph.framework import event_format as ef
        node = ef.NodeDef(name="n", op="Const", attr={"dtype": ef.AttrValue(type=1)})
        try:
            node.to_protobuf()
        except ImportError as e:
            assert "flowgraph[protobuf]" in str(e)
        print(node.SerializeToString().hex())
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env={k: v for k, v in os.environ.items()
                                           if k != "FLOWGRAPH_PROTOBUF"})
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == node.SerializeToString().hex()
