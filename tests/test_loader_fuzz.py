"""A seeded fuzz campaign over every loader: checkpoints (flowgraph's, and TensorFlow's
tensor bundles), SavedModels, graph JSON, event files, TFRecord files, ``.meta`` files
(TensorFlow's MetaGraphDef, binary and text).

Each format starts from small valid files written by flowgraph; `mutate` applies one to
three of bit flips, truncation, splices (a chunk copied over another place, or from
another seed file), inserted bytes and length-field inflation (a byte run overwritten
with a large little-endian integer, a decimal number in a text file replaced by a huge
one); JSON formats mostly get structural mutations instead (`mutate_json`: values
swapped, huge numbers, wrong types, deleted keys, a node's op type replaced), since a
flipped byte rarely survives the JSON parser; a SavedModel's variables file is mutated
in 30 % of its cases. Every mutated file is loaded and must either load or raise one of
flowgraph's errors (`tf.errors.OpError` subclasses such as DataLossError and
InvalidArgumentError, `SavedModelFormatError`, `ImportGraphDefError`, and for a
SavedModel the documented RuntimeError of a missing tag set); no load may take over
2 s, and none may allocate more than 10x the file's size (tracemalloc peak) plus a
fixed allowance for the objects any load builds (twice the valid file's peak + 1 MiB).

The default run does 1,000 mutations per format (100 for the SavedModel formats and 150
for meta graphs and JSON graphs, whose loads build a graph and take 5-10 ms each: a smoke
run that keeps the default suite inside its time budget); the ``slow`` run 20,000 of
every format.
A failure prints the seed and the mutation, so it can be replayed with `mutate`.
"""

from __future__ import annotations

import gc
import json
import os
import random
import re
import time
import tracemalloc

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import saved_model as sm
from flowgraph.framework import errors
from flowgraph.framework.importer import ImportGraphDefError, graph_def_from_json
from flowgraph.io.tf_record import TFRecordWriter, tf_record_iterator
from flowgraph.summary.event_format import summary_iterator
from flowgraph.train.checkpoint_utils import CheckpointReader, write_checkpoint

FAST_COUNT = 1000
# Formats whose every load builds a whole graph: fewer default mutations (the slow run
# does its 20,000 of each)
FAST_COUNT_OF = {"saved_model": 100, "tf_saved_model": 100, "meta_graph": 150,
                 "graph_json": 150}
SLOW_COUNT = 20_000
MAX_SECONDS = 2.0
ALLOWED = (errors.OpError, sm.SavedModelFormatError, ImportGraphDefError)

_BIG = [1 << 28, 1 << 31, (1 << 32) - 1, 1 << 62, (1 << 64) - 1, 0x7FFF, 0xFFFF]


# -- the mutator --------------------------------------------------------------------------
def mutate(data: bytes, rng: random.Random, others: list[bytes]) -> tuple[bytes, list[str]]:
    """`data` with one to three random mutations; returns (bytes, descriptions)."""
    buf = bytearray(data)
    done = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["flip", "flip", "truncate", "splice", "splice_other", "insert",
                           "inflate", "inflate", "number"])
        n = len(buf)
        if n == 0:
            break
        if kind == "flip":
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(n)
                buf[i] ^= 1 << rng.randrange(8)
        elif kind == "truncate":
            del buf[rng.randrange(n):]
        elif kind in ("splice", "splice_other"):
            src = buf if kind == "splice" or not others else rng.choice(others)
            if not src:
                continue
            a = rng.randrange(len(src))
            chunk = bytes(src[a:a + rng.randint(1, 64)])
            b = rng.randrange(n)
            buf[b:b + len(chunk)] = chunk
        elif kind == "insert":
            b = rng.randrange(n + 1)
            buf[b:b] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif kind == "inflate":
            width = rng.choice([2, 4, 8])
            value = rng.choice(_BIG) & ((1 << (8 * width)) - 1)
            b = rng.randrange(max(n - width, 1))
            buf[b:b + width] = value.to_bytes(width, "little")
        else:  # a decimal number (shape, length, count) of a text format made huge
            numbers = [m.span() for m in re.finditer(rb"\d+", bytes(buf))]
            if not numbers:
                continue
            a, b = rng.choice(numbers)
            buf[a:b] = str(rng.choice([*_BIG, -1, 10 ** 30])).encode()
        done.append(kind)
    return bytes(buf), done


def _json_paths(doc, path=()):
    yield path
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _json_paths(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _json_paths(v, (*path, i))


def _get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


_OP_TYPES = ["MatMul", "Const", "Placeholder", "Relu", "Add", "ConcatV2", "Sum", "Cast",
             "ArgMax", "Reshape", "Fill", "Identity", "VariableV2", "Assign", "NoOp",
             "Switch", "Merge", "InitializeTableFromTextFileV2", "HashTableV2",
             "IteratorGetNext", "Squeeze", "Transpose", "StridedSlice", "Conv2D"]


def mutate_json(data: bytes, rng: random.Random) -> tuple[bytes, list[str]]:
    """A structural mutation of a JSON document: a value replaced by another of the
    document, a huge or negative number, another type, a deleted key, or (for a node's
    ``op``) another op type."""
    doc = json.loads(data)
    paths = [p for p in _json_paths(doc) if p]
    done = []
    for _ in range(rng.randint(1, 3)):
        if not paths:
            break
        path = rng.choice(paths)
        parent, key = _get(doc, path[:-1]), path[-1]
        try:
            _get(doc, path)
        except (KeyError, IndexError, TypeError):
            continue
        kind = rng.choice(["other", "number", "type", "delete", "op"])
        if kind == "op" or (key == "op" and rng.random() < 0.5):
            ops = [p for p in paths if p and p[-1] == "op"]
            if not ops:
                continue
            path = rng.choice(ops)
            parent, key, kind = _get(doc, path[:-1]), path[-1], "op"
            parent[key] = rng.choice(_OP_TYPES)
        elif kind == "other":
            parent[key] = json.loads(json.dumps(_get(doc, rng.choice(paths))))
        elif kind == "number":
            parent[key] = rng.choice([*_BIG, -1, -(1 << 40), 0, 1.5e308])
        elif kind == "type":
            parent[key] = rng.choice([None, True, "x", [], {}, [1, 2], {"list": 3}])
        elif isinstance(parent, dict):
            del parent[key]
        else:
            parent.pop(key)
        done.append(f"json:{kind}@{'/'.join(map(str, path))[-60:]}")
        paths = [p for p in _json_paths(doc) if p]
    return json.dumps(doc).encode(), done


# -- seed files ---------------------------------------------------------------------------
def _checkpoint_seeds(d: str) -> list[bytes]:
    out = []
    for i, tensors in enumerate([
        {"w": np.arange(6, dtype=np.float32).reshape(3, 2), "b": np.zeros(2, np.float64)},
        {"step": np.array(7, np.int64), "s": np.array([b"ab", b"c"], dtype=object),
         "m": np.ones((2, 2, 2), np.int32)},
    ]):
        path = os.path.join(d, f"seed{i}")
        write_checkpoint(path, tensors)
        out.append(open(path, "rb").read())
    path = os.path.join(d, "deflated")  # another writer's checkpoint, with deflated members
    with open(path, "wb") as f:
        np.savez_compressed(f, z=np.zeros((64, 64), np.float32), i=np.arange(5))
    out.append(open(path, "rb").read())
    return out


def _load_checkpoint(path: str, variant: int) -> None:
    with CheckpointReader(path) as reader:
        shapes = reader.get_variable_to_shape_map()
        reader.get_variable_to_dtype_map()
        for key in sorted(shapes):
            reader.get_tensor(key)


def _graph(seed: int):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.ones((3, 2), np.float32), name="w")
        y = tf.nn.relu(tf.matmul(x, w) + tf.constant([0.5, -0.5]), name="y")
        if seed:
            tf.reduce_sum(tf.concat([y, y], axis=1), axis=[0], name="z")
            tf.cast(tf.argmax(y, 1), tf.float32, name="c")
    return g, x, y


def _graph_json_seeds(d: str) -> list[bytes]:
    return [json.dumps(_graph(i)[0].as_graph_def()).encode() for i in range(2)]


def _load_graph_json(path: str, variant: int) -> None:
    with open(path, "rb") as f:
        graph_def = graph_def_from_json(f.read())
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")


def _saved_model_dir(d: str, i: int, format: str = "flowgraph") -> str:
    """Model 1 also looks words up in a table read from an asset file."""
    export = os.path.join(d, f"model{i}")
    g, x, y = _graph(i)
    with g.as_default(), tf.Session() as sess:
        inputs, outputs, init = {"x": x}, {"y": y}, None
        if i:
            vocab = os.path.join(d, "vocab.txt")
            with open(vocab, "w") as f:
                f.write("a\nb\nc\n")
            words = tf.placeholder(tf.string, [None], name="words")
            table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
                vocab, tf.string, -2, tf.int64, -1), -1)
            inputs["words"], outputs["ids"] = words, table.lookup(words)
            init = tf.tables_initializer()
        sess.run(tf.global_variables_initializer())
        sm.simple_save(sess, export, inputs, outputs, legacy_init_op=init, format=format)
    return export


_DOCUMENT = {"saved_model": "saved_model.json", "tf_saved_model": "saved_model.pb"}


def _saved_model_seeds(d: str) -> list[bytes]:
    return [open(os.path.join(_saved_model_dir(d, i), "saved_model.json"), "rb").read()
            for i in range(2)]


def _tf_saved_model_seeds(d: str) -> list[bytes]:
    """The default export: TensorFlow's saved_model.pb."""
    return [open(os.path.join(_saved_model_dir(d, i, "tensorflow"), "saved_model.pb"),
                 "rb").read() for i in range(2)]


def _event_seeds(d: str) -> list[bytes]:
    out = []
    for i in range(2):
        logdir = os.path.join(d, f"events{i}")
        g = _graph(i)[0]
        with tf.summary.FileWriter(logdir, graph=g if i else None) as w:
            for step in range(3):
                w.add_summary(tf.Summary(value=[tf.Summary.Value(
                    tag="loss", simple_value=1.0 / (step + 1))]), step)
        (name,) = os.listdir(logdir)
        out.append(open(os.path.join(logdir, name), "rb").read())
    return out


def _load_events(path: str, variant: int) -> None:
    for event in summary_iterator(path):
        event.SerializeToString()


def _tfrecord_seeds(d: str) -> list[bytes]:
    out = []
    for i, compression in enumerate(["", "GZIP"]):
        path = os.path.join(d, f"r{i}.tfrecord")
        with TFRecordWriter(path, compression) as w:
            for k in range(4):
                w.write(b"record %d " % k * (k + 1))
        out.append(open(path, "rb").read())
    return out


def _load_tfrecord(path: str, variant: int) -> None:
    for _ in tf_record_iterator(path, "GZIP" if variant else ""):
        pass


def _meta_graph_seeds(d: str) -> list[bytes]:
    """TensorFlow's .meta fixture, and flowgraph's own in binary and text form."""
    here = os.path.join(os.path.dirname(__file__), "data", "tf_formats", "meta")
    out = [open(os.path.join(here, "model.ckpt-3.meta"), "rb").read()]
    g = _graph(1)[0]
    with g.as_default():
        saver = tf.train.Saver()
        for as_text in (False, True):
            path = os.path.join(d, f"seed{int(as_text)}.meta")
            saver.export_meta_graph(path, as_text=as_text)
            out.append(open(path, "rb").read())
    return out


def _load_meta_graph(path: str, variant: int) -> None:
    with tf.Graph().as_default():
        tf.train.import_meta_graph(path)


# -- the campaign -------------------------------------------------------------------------
def _measure(load, path: str, variant: int):
    tracemalloc.start()
    tracemalloc.reset_peak()
    # The loader's own time: a full collection of what earlier tests left behind (seconds
    # on a large heap, with tracemalloc on) waits until after the measurement.
    gc.disable()
    start = time.perf_counter()
    error = None
    try:
        load(path, variant)
    except Exception as e:  # judged by the caller
        error = e
    finally:
        elapsed = time.perf_counter() - start
        gc.enable()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return error, elapsed, peak


def _campaign(tmp_path, fmt: str, count: int, seed: int = 16) -> None:
    d = str(tmp_path)
    seeds = {"checkpoint": _checkpoint_seeds, "graph_json": _graph_json_seeds,
             "event_file": _event_seeds, "tfrecord": _tfrecord_seeds,
             "saved_model": _saved_model_seeds, "meta_graph": _meta_graph_seeds,
             "tf_saved_model": _tf_saved_model_seeds}[fmt](d)
    if fmt in _DOCUMENT:
        exports = [os.path.join(d, f"model{i}") for i in range(len(seeds))]
        # the variables checkpoint's files (TensorFlow's layout by default: .index + data)
        variables = [{os.path.join(e, "variables", n): open(os.path.join(e, "variables", n),
                                                             "rb").read()
                      for n in sorted(os.listdir(os.path.join(e, "variables")))}
                     for e in exports]

        def load(path, variant):
            with tf.Graph().as_default(), tf.Session() as sess:
                try:
                    sm.loader.load(sess, ["serve"], exports[variant])
                except RuntimeError as e:  # a documented error: no meta graph with the tags
                    if "could not be found" not in str(e):
                        raise
    else:
        target = os.path.join(d, "fuzzed")
        load = {"checkpoint": _load_checkpoint, "graph_json": _load_graph_json,
                "event_file": _load_events, "tfrecord": _load_tfrecord,
                "meta_graph": _load_meta_graph}[fmt]
    allowance = 0
    for variant, data in enumerate(seeds):  # the valid files load, and set the allowance
        if fmt in _DOCUMENT:
            target = os.path.join(exports[variant], _DOCUMENT[fmt])
        with open(target, "wb") as f:
            f.write(data)
        error, _, peak = _measure(load, target, variant)
        assert error is None, f"{fmt}: seed file {variant} does not load: {error!r}"
        allowance = max(allowance, peak)
    allowance = 2 * allowance + (1 << 20)
    rng = random.Random(seed)
    failures = []
    for i in range(count):
        variant = rng.randrange(len(seeds))
        original = seeds[variant]
        if fmt in _DOCUMENT:
            target = os.path.join(exports[variant], _DOCUMENT[fmt])
            with open(target, "wb") as f:
                f.write(seeds[variant])
            if rng.random() < 0.3:  # a variables checkpoint file instead of the document
                target = rng.choice(sorted(variables[variant]))
                original = variables[variant][target]
            for path, data in variables[variant].items():
                with open(path, "wb") as f:
                    f.write(data)
        if original is seeds[variant] and fmt in ("saved_model", "graph_json") \
                and rng.random() < 0.7:
            data, how = mutate_json(original, rng)
        else:
            data, how = mutate(original, rng, seeds)
        with open(target, "wb") as f:
            f.write(data)
        error, elapsed, peak = _measure(load, target, variant)
        problem = None
        if error is not None and not isinstance(error, ALLOWED):
            problem = f"raised {type(error).__name__}: {str(error)[:200]}"
        elif elapsed > MAX_SECONDS:
            problem = f"took {elapsed:.2f} s"
        elif peak > 10 * len(data) + allowance:
            problem = f"allocated {peak} bytes for a {len(data)}-byte file"
        if problem:
            failures.append(f"#{i} (seed {seed}, variant {variant}, {how}): {problem}")
    assert not failures, f"{len(failures)} of {count} mutated {fmt} files:\n" + \
        "\n".join(failures[:20])


FORMATS = ["checkpoint", "saved_model", "tf_saved_model", "graph_json", "event_file",
           "tfrecord", "meta_graph"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_fuzz_loaders(tmp_path, fmt):
    _campaign(tmp_path, fmt, FAST_COUNT_OF.get(fmt, FAST_COUNT))


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
def test_fuzz_loaders_slow(tmp_path, fmt):
    _campaign(tmp_path, fmt, SLOW_COUNT, seed=1616)


def test_mutator_is_deterministic_and_changes_files():
    data = bytes(range(200))
    a = [mutate(data, random.Random(3), [data]) for _ in range(2)]
    assert a[0] == a[1]
    rng = random.Random(5)
    assert sum(mutate(data, rng, [data])[0] != data for _ in range(50)) >= 45


def _tf_checkpoint_campaign(tmp_path, count: int, seed: int) -> None:
    """TensorFlow-format checkpoints (tensor bundles written by TensorFlow): the .index
    table or the data shard mutated, then every tensor read."""
    import shutil

    from flowgraph.train.checkpoint_utils import NewCheckpointReader

    here = os.path.join(os.path.dirname(__file__), "data", "tf_formats")
    prefixes = []
    for name, step in (("linear", 5), ("model", 7), ("partitioned", 1)):
        shutil.copytree(os.path.join(here, name), tmp_path / name)
        prefixes.append(str(tmp_path / name / f"model.ckpt-{step}"))
    files = [(p + ".index", p + ".data-00000-of-00001") for p in prefixes]
    originals = [tuple(open(f, "rb").read() for f in pair) for pair in files]

    def load(prefix, _variant):
        reader = NewCheckpointReader(prefix)
        for name in reader.get_variable_to_shape_map():
            reader.get_tensor(name)

    rng = random.Random(seed)
    failures = []
    for i in range(count):
        variant = rng.randrange(len(prefixes))
        which = rng.randrange(2)
        for f, data in zip(files[variant], originals[variant], strict=True):
            with open(f, "wb") as out:
                out.write(data)
        data, how = mutate(originals[variant][which], rng, [o[which] for o in originals])
        with open(files[variant][which], "wb") as out:
            out.write(data)
        error, elapsed, _ = _measure(load, prefixes[variant], variant)
        if error is not None and not isinstance(error, ALLOWED):
            failures.append(f"#{i} ({'index' if which == 0 else 'data'}, {how}): raised "
                            f"{type(error).__name__}: {str(error)[:200]}")
        elif elapsed > MAX_SECONDS:
            failures.append(f"#{i} ({how}): took {elapsed:.2f} s")
    assert not failures, f"{len(failures)} of {count} mutated TF checkpoints:\n" + \
        "\n".join(failures[:20])


def test_fuzz_tensorflow_checkpoints(tmp_path):
    _tf_checkpoint_campaign(tmp_path, FAST_COUNT, seed=17)


@pytest.mark.slow
def test_fuzz_tensorflow_checkpoints_slow(tmp_path):
    _tf_checkpoint_campaign(tmp_path, SLOW_COUNT, seed=1717)
