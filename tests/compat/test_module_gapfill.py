"""tf.config, tf.test, tf.debugging and small-module names of TF 2.15's compat.v1.

Expected values were settled with TensorFlow 2.15 (tf.compat.v1, v2 behaviour disabled)
and are written inline. Every test that touches process-wide settings resets them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import backends
from flowgraph.backends.base import Backend, Device
from flowgraph.framework import context_settings

E = tf.config.experimental


@pytest.fixture(autouse=True)
def _fresh_settings():
    context_settings.reset()
    tf.reset_default_graph()
    yield
    context_settings.reset()


class _FakeGpu(Backend):
    """Two GPU devices computing with NumPy (placement tests need no hardware)."""

    device_type = "GPU"

    def list_devices(self, count=None):
        n = 2 if count is None else min(int(count), 2)
        return [Device(self, "GPU", i, memory_limit=1 << 20, description=f"fake gpu {i}")
                for i in range(n)]

    def load_kernels(self):
        self.register_kernel("Mul", np.multiply)

    def to_host(self, value, device):
        return value

    def from_host(self, value, device):
        return value


@pytest.fixture
def fake_gpus():
    backends.register_backend(_FakeGpu())
    yield
    backends.reload_backends()


# -- tf.config --------------------------------------------------------------------------

def test_physical_devices_and_tf_errors():
    cpus = E.list_physical_devices("CPU")
    assert cpus == [tf.config.PhysicalDevice("/physical_device:CPU:0", "CPU")]
    assert E.list_physical_devices("cpu") == []  # TF matches the type exactly
    with pytest.raises(KeyError):
        E.get_memory_growth(cpus[0])
    with pytest.raises(ValueError, match="Cannot set memory growth on non-GPU and "
                                         "non-Pluggable devices"):
        E.set_memory_growth(cpus[0], True)
    ghost = tf.config.PhysicalDevice("/physical_device:GPU:7", "GPU")
    for call in (lambda: E.set_visible_devices([ghost]), lambda: E.set_memory_growth(ghost, 1),
                 lambda: E.get_memory_growth(ghost)):
        with pytest.raises(ValueError, match=r"Unrecognized device: PhysicalDevice\(name="
                                             r"'/physical_device:GPU:7', device_type='GPU'\)"):
            call()
    assert E.get_device_details(cpus[0]) == {}
    with pytest.raises(ValueError, match=re.escape("device must be a tf.config.PhysicalDevice, "
                                                   "but got: CPU:0")):
        E.get_device_details("CPU:0")
    with pytest.raises(ValueError, match="Setting memory limit on CPU virtual devices is "
                                         "currently not supported"):
        E.set_virtual_device_configuration(cpus[0], [E.VirtualDeviceConfiguration(5)])
    assert E.VirtualDeviceConfiguration is tf.config.LogicalDeviceConfiguration
    assert repr(E.VirtualDeviceConfiguration(memory_limit=1024)) == (
        "LogicalDeviceConfiguration(memory_limit=1024, experimental_priority=None, "
        "experimental_device_ordinal=None)")


def test_memory_info_and_initialization_errors():
    cpus = E.list_physical_devices("CPU")
    assert E.get_memory_info("CPU:0") == {"current": 0, "peak": 0}
    assert E.get_memory_info("/device:CPU:0") == {"current": 0, "peak": 0}
    with pytest.raises(ValueError, match="No matching devices found for 'cpu:0'"):
        E.get_memory_info("cpu:0")
    with pytest.raises(ValueError, match="Failed parsing device name: 'bogus'"):
        E.get_memory_info("bogus")
    # the runtime is initialized now: the layout is fixed, unchanged settings pass
    with pytest.raises(RuntimeError, match="Virtual devices cannot be modified after "
                                           "being initialized"):
        E.set_virtual_device_configuration(cpus[0], [E.VirtualDeviceConfiguration()] * 2)
    E.set_visible_devices(E.get_visible_devices())


def test_virtual_cpus_reach_sessions():
    cpus = tf.config.list_physical_devices("CPU")
    logical = [tf.config.LogicalDeviceConfiguration()] * 3
    tf.config.set_logical_device_configuration(cpus[0], logical)
    with tf.device("/cpu:2"):
        x = tf.constant(3.0) * 2
    with tf.Session() as s:
        names = [d.name for d in s.list_devices() if d.device_type == "CPU"]
        assert s.run(x) == 6.0
    assert names == [f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in range(3)]
    assert [d.name for d in tf.config.list_logical_devices("CPU")] == [
        "/device:CPU:0", "/device:CPU:1", "/device:CPU:2"]
    # an explicit ConfigProto is taken as given, as in TensorFlow
    with tf.Session(config=tf.ConfigProto()) as s:
        assert [d.name for d in s.list_devices() if d.device_type == "CPU"] == [names[0]]


def test_hidden_gpus_are_not_placed_on(fake_gpus):
    gpus = E.list_physical_devices("GPU")
    assert [g.name for g in gpus] == ["/physical_device:GPU:0", "/physical_device:GPU:1"]
    for g in gpus:  # the opening lines of many TF1 scripts
        E.set_memory_growth(g, True)
    assert [E.get_memory_growth(g) for g in gpus] == [True, True]
    assert tf.Session()._config.gpu_options.allow_growth is True
    assert E.get_device_details(gpus[1]) == {"device_name": "fake gpu 1"}
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.device("/gpu:1"):
        y = x * 2
    with tf.Session() as s:
        assert s.run(y, {x: 3.0}) == 6.0
    E.set_visible_devices(gpus[:1], "GPU")
    assert E.get_visible_devices("GPU") == gpus[:1]
    with tf.Session() as s:
        assert [d.device_type for d in s.list_devices()] == ["CPU", "GPU"]
    E.set_visible_devices([], "GPU")
    with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError, match="GPU"):
        s.run(y, {x: 3.0})
    tf.config.set_soft_device_placement(True)
    with tf.Session() as s:
        assert s.run(y, {x: 3.0}) == 6.0
    assert tf.config.list_logical_devices("GPU") == []
    with pytest.raises(RuntimeError, match="Visible devices cannot be modified after being "
                                           "initialized"):
        E.set_visible_devices(gpus, "GPU")
    with pytest.raises(RuntimeError, match="Physical devices cannot be modified"):
        E.set_memory_growth(gpus[0], False)


def test_switches_and_optimizer_options():
    assert E.get_device_policy() == "silent"
    E.set_device_policy("explicit")
    assert E.get_device_policy() == "explicit"
    E.set_device_policy(None)
    assert E.get_device_policy() == "silent"
    with pytest.raises(ValueError, match="Invalid argument `device_policy`: 'bogus'"):
        E.set_device_policy("bogus")
    assert E.get_synchronous_execution() is True
    assert E.tensor_float_32_execution_enabled() is True
    E.enable_tensor_float_32_execution(False)
    assert E.tensor_float_32_execution_enabled() is False
    E.enable_mlir_bridge()
    E.disable_mlir_bridge()
    opt = tf.config.optimizer
    assert opt.get_jit() == ""
    opt.set_jit(True)
    assert opt.get_jit() == "autoclustering"
    opt.set_jit(False)
    assert opt.get_jit() == ""
    assert opt.get_experimental_options() == {"disable_model_pruning": False,
                                              "disable_meta_optimizer": False}
    opt.set_experimental_options({"constant_folding": False, "min_graph_nodes": 3})
    assert opt.get_experimental_options() == {
        "constant_folding": False, "disable_model_pruning": False,
        "disable_meta_optimizer": False, "min_graph_nodes": 3}
    config = tf.Session()._config
    rewrite = config.graph_options.rewrite_options
    assert rewrite.constant_folding == rewrite.OFF and rewrite.min_graph_nodes == 3
    assert tf.config.functions_run_eagerly() is False
    tf.config.run_functions_eagerly(True)
    assert tf.config.functions_run_eagerly() is True
    with pytest.warns(DeprecationWarning):
        tf.config.experimental_run_functions_eagerly(False)
    with pytest.warns(DeprecationWarning):
        assert tf.config.experimental_functions_run_eagerly() is False
    for connect in (tf.config.experimental_connect_to_cluster,
                    tf.config.experimental_connect_to_host):
        with pytest.raises(ValueError, match="can only be called in eager mode"):
            connect(None)
    filters = E.ClusterDeviceFilters()
    filters.set_device_filters("worker", 0, ["/job:ps"])
    assert filters.filters("worker", 0) == ["/job:ps"]


def test_log_device_placement_and_soft_placement_defaults(capsys):
    assert tf.config.get_soft_device_placement() is False
    assert tf.debugging.get_log_device_placement() is False
    tf.debugging.set_log_device_placement(True)
    assert tf.debugging.get_log_device_placement() is True
    assert tf.Session()._config.log_device_placement is True


# -- tf.test ------------------------------------------------------------------------------

def test_tf_test_helpers():
    config = tf.test.benchmark_config()
    assert config.graph_options.rewrite_options.dependency_optimization == 2  # OFF
    assert tf.test.with_eager_op_as_function(int) is int
    with pytest.raises(RuntimeError, match="sync_devices\\(\\) must only be called in "
                                           "Eager mode"):
        tf.test.experimental.sync_devices()
    with pytest.raises(KeyError):
        os.environ.pop("TEST_SRCDIR", None)
        tf.test.test_src_dir_path("python/ops")
    for name in ("assertAllClose", "assertAllEqual", "cached_session", "test_session",
                 "session", "evaluate", "assertRaisesOpError", "get_temp_dir",
                 "assertShapeEqual", "create_tempdir", "assertJsonEqual"):
        assert callable(getattr(tf.test.TestCase, name)), name

    class T(tf.test.TestCase):
        @tf.test.disable_with_predicate(lambda: True, "skipped by predicate")
        def test_skipped(self):
            raise AssertionError("must not run")

        @tf.test.disable_with_predicate(lambda: False, "never")
        def test_runs(self):
            self.assertAllClose(self.evaluate(tf.constant([1.0]) * 2), [2.0])

    import unittest

    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(T).run(result)
    assert not result.failures and not result.errors, (result.failures, result.errors)
    assert "skipped by predicate" in [reason for _, reason in result.skipped]


def test_create_local_cluster():
    pytest.importorskip("grpc")
    workers, ps = tf.test.create_local_cluster(2, 1)
    assert (len(workers), len(ps)) == (2, 1)
    assert workers[0].target.startswith("grpc://localhost:")
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(3.0, name="v")
    with tf.device("/job:worker/task:1"):
        y = v * 2.0
    with tf.Session(workers[0].target) as s:
        s.run(tf.global_variables_initializer())
        assert s.run(y) == 6.0


# -- tf.debugging ---------------------------------------------------------------------------

def test_debugging_names():
    x = tf.constant([1.5, -2.0, 300.0])
    tf.debugging.assert_proper_iterable([1, 2])
    with pytest.raises(TypeError, match=re.escape('Expected argument "values" to be a "proper" '
                                                  "iterable.  Found: <class 'str'>")):
        tf.debugging.assert_proper_iterable("ab")
    with pytest.raises(TypeError, match=re.escape('Expected argument "values" to be iterable.  '
                                                  "Found: <class 'int'>")):
        tf.debugging.assert_proper_iterable(3)
    assert tf.debugging.assert_rank_in(x, [1, 2]).type == "NoOp"
    with pytest.raises(ValueError, match="must have rank in"):
        tf.debugging.assert_rank_in(x, [0, 2])
    p = tf.placeholder(tf.float32)
    check = tf.debugging.assert_rank_in(p, (0, 2))
    assert check.type == "Assert"
    nd = tf.debugging.is_non_decreasing([1, 1, 2])
    si = tf.debugging.is_strictly_increasing([1, 1, 2])
    with tf.Session() as s:
        assert s.run([nd, si]) == [True, False]
        with pytest.raises(tf.errors.InvalidArgumentError, match="must have rank in"):
            s.run(check, {p: [1.0]})
    assert tf.debugging.is_traceback_filtering_enabled() is True
    tf.debugging.disable_traceback_filtering()
    assert tf.debugging.is_traceback_filtering_enabled() is False
    tf.debugging.enable_traceback_filtering()
    with pytest.raises(NotImplementedError, match="add_check_numerics_ops"):
        tf.debugging.enable_check_numerics()
    tf.debugging.disable_check_numerics()
    with pytest.raises(NotImplementedError, match="tfdbg"):
        tf.debugging.experimental.enable_dump_debug_info("/tmp/x")
    tf.debugging.experimental.disable_dump_debug_info()


# -- small modules ----------------------------------------------------------------------------

def test_dtypes_namespace_ops():
    x = tf.constant([1.5, -2.0, 300.0])
    c, s8 = tf.dtypes.cast(x, tf.int32), tf.dtypes.saturate_cast(x, tf.uint8)
    st, cx = tf.dtypes.as_string(x, precision=2), tf.dtypes.complex(x, x)
    assert [t.op.type for t in (c, s8, st, cx)] == ["Cast", "Cast", "AsString", "Complex"]
    assert cx.dtype == tf.complex64
    with tf.Session() as s:
        out = s.run([c, s8, st, cx])
    np.testing.assert_array_equal(out[0], np.array([1, -2, 300], np.int32))
    np.testing.assert_array_equal(out[1], np.array([1, 0, 255], np.uint8))
    assert out[2].tolist() == [b"1.50", b"-2.00", b"300.00"]
    np.testing.assert_allclose(out[3], [1.5 + 1.5j, -2 - 2j, 300 + 300j])
    assert str(tf.dtypes.experimental.int4) == "<dtype: 'int4'>"
    assert str(tf.dtypes.experimental.float8_e4m3fn) == "<dtype: 'float8_e4m3fn'>"
    assert tf.dtypes.experimental.float8_e5m2.is_floating
    assert tf.dtypes.experimental.uint4.is_unsigned
    assert tf.dtypes.float32 is tf.float32 and tf.dtypes.as_dtype("int4").name == "int4"


def test_compat_gfile_constants_sysconfig_initializers():
    assert tf.compat.dimension_value(tf.TensorShape([3, None])[0]) == 3
    assert str(tf.compat.dimension_at_index(tf.TensorShape([3, None]), 1)) == "?"
    assert tf.compat.v1.compat.dimension_value(5) == 5
    with tf.compat.forward_compatibility_horizon(2030, 1, 1):
        assert (tf.compat.forward_compatible(2029, 12, 31),
                tf.compat.forward_compatible(2030, 1, 2)) == (True, False)
    assert (tf.compat.forward_compatible(2019, 1, 1),
            tf.compat.forward_compatible(2100, 1, 1)) == (True, False)
    assert tf.io.gfile.join("a", "b", "c.txt") == "a/b/c.txt"
    assert tf.io.gfile.join("gs://bucket", "x") == "gs://bucket/x"
    assert tf.io.gfile.join("/a/", "/b") == "/b"
    assert {"", "file"} <= set(tf.io.gfile.get_registered_schemes())
    C = tf.saved_model.constants
    assert (C.ASSETS_KEY, C.DEBUG_DIRECTORY, C.DEBUG_INFO_FILENAME_PB, C.LEGACY_INIT_OP_KEY,
            C.MAIN_OP_KEY) == ("saved_model_assets", "debug", "saved_model_debug_info.pb",
                               "legacy_init_op", "saved_model_main_op")
    assert (tf.sysconfig.CXX11_ABI_FLAG, tf.sysconfig.CXX_VERSION,
            tf.sysconfig.MONOLITHIC_BUILD) == (1, 201703, 0)
    t = tf.initializers.tables_initializer()
    assert (t.type, t.name) == ("NoOp", "init_all_tables")


def test_method_name_updater_fresh_process(tmp_path):
    export = str(tmp_path / "model")
    with tf.Graph().as_default(), tf.Session() as s:
        x = tf.placeholder(tf.float32, [None], name="x")
        tf.saved_model.simple_save(s, export, {"x": x}, {"y": x * 2.0})
    updater = tf.saved_model.signature_def_utils.MethodNameUpdater(export)
    with pytest.raises(ValueError, match="does not have a signature_def with key: 'nope'"):
        updater.replace_method_name("nope", "m")
    with pytest.raises(ValueError, match="could not be found in SavedModel"):
        updater.replace_method_name("serving_default", "m", tags=["train"])
    updater.replace_method_name("serving_default", "tensorflow/serving/regress",
                                tags=["serve"])
    updater.save(str(tmp_path / "copy"))
    code = textwrap.dedent(f"""
        import flowgraph as tf
        for d, want in (({export!r}, "tensorflow/serving/predict"),
                        ({str(tmp_path / "copy")!r}, "tensorflow/serving/regress")):
            with tf.Graph().as_default(), tf.Session() as s:
                mg = tf.saved_model.loader.load(s, ["serve"], d)
                assert mg.signature_def["serving_default"].method_name == want, d
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "ok", out.stderr


def test_stateless_shuffle_tensorflow_graph_and_values():
    v = tf.constant([[1, 2], [3, 4], [5, 6]])
    s = tf.random.experimental.stateless_shuffle(v, seed=[8, 9])
    r = tf.random.experimental.stateless_shuffle(tf.range(10), seed=[1, 2])
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    p = tf.random.experimental.stateless_shuffle(x, seed=[1, 2], alg="philox")
    ops = [(o.name, o.type) for o in tf.get_default_graph().get_operations()]
    assert ops[1:5] == [  # TensorFlow 2.15's graph
        ("stateless_shuffle/StatelessRandomGetKeyCounter/seed", "Const"),
        ("stateless_shuffle/StatelessRandomGetKeyCounter", "StatelessRandomGetKeyCounter"),
        ("stateless_shuffle/StatelessShuffle/alg", "Const"),
        ("stateless_shuffle/StatelessShuffle", "StatelessShuffle")]
    assert ("stateless_shuffle_2/StatelessRandomUniformFullIntV2",
            "StatelessRandomUniformFullIntV2") in ops
    assert (s.shape.as_list(), p.shape.as_list(), p.dtype) == ([3, 2], [None, 2], tf.float32)
    k, c = tf.raw_ops.StatelessRandomGetKeyCounter(seed=[1, 2])
    assert (k.dtype, k.shape.as_list(), c.dtype, c.shape.as_list()) == (
        tf.uint64, [1], tf.uint64, [2])
    rows = np.arange(1, 11, dtype=np.float32).reshape(5, 2)
    with tf.Session() as sess:
        got = sess.run([s, r, k, c, p], {x: rows})
    assert got[0].tolist() == [[5, 6], [1, 2], [3, 4]]
    assert got[1].tolist() == [0, 3, 8, 1, 5, 4, 9, 7, 6, 2]
    assert got[2].tolist() == [10413732777507651514]
    assert got[3].tolist() == [0, 17830669156045600267]
    assert sorted(got[4].tolist()) == rows.tolist()  # a permutation of the rows
    with pytest.raises(LookupError, match="No gradient defined for operation"):
        tf.gradients(tf.random.experimental.stateless_shuffle(x, seed=[3, 4]), x)
    with pytest.raises(ValueError, match="Argument `alg` got unsupported value bogus"):
        tf.random.experimental.stateless_shuffle(x, seed=[3, 4], alg="bogus")
    with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
        tf.random.experimental.stateless_shuffle(x, seed=[1, 2, 3])


def test_user_ops_fact_and_experimental_dtypes():
    f = tf.user_ops.my_fact()
    assert (f.op.type, f.dtype, f.shape.ndims) == ("Fact", tf.string, None)
    with tf.Session() as s:
        assert s.run(f) == b"0! == 1"  # TensorFlow 2.15's value
    assert tf.experimental.int4 is tf.dtypes.experimental.int4
    assert str(tf.experimental.float8_e4m3fn) == "<dtype: 'float8_e4m3fn'>"


def test_xla_lite_mlir():
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.xla.experimental.jit_scope():
        y = tf.add(x * 2.0, 1.0, name="y")
    assert y.op.get_attr("_XlaCompile") is True
    out = tf.xla.experimental.compile(lambda a, b: (a + b, a * b),
                                      inputs=[x, tf.constant([3.0, 4.0])])
    assert isinstance(out, list) and len(out) == 2
    with tf.Session() as s:
        got = s.run(out, {x: [1.0, 2.0]})
    np.testing.assert_allclose(got, [[4.0, 6.0], [3.0, 8.0]])
    with pytest.raises(NotImplementedError, match="from_saved_model"):
        tf.lite.TFLiteConverter.from_session(tf.Session(), [x], [y])
    assert (tf.lite.constants.TFLITE, tf.lite.constants.GRAPHVIZ_DOT) == (2, 3)
    assert tf.lite.constants.QUANTIZED_UINT8 == tf.uint8
    assert [o.value for o in tf.lite.Optimize] == [
        "DEFAULT", "OPTIMIZE_FOR_SIZE", "OPTIMIZE_FOR_LATENCY", "EXPERIMENTAL_SPARSITY"]
    with pytest.raises(NotImplementedError, match="MLIR"):
        tf.mlir.experimental.convert_graph_def(tf.get_default_graph().as_graph_def())


# -- tf.app.flags -------------------------------------------------------------------------------

_FLAGS_PROGRAM = '''
import enum, sys
import flowgraph as tf
flags = tf.app.flags
FLAGS = flags.FLAGS
class Color(enum.Enum):
    RED = 1
    BLUE = 2
flags.DEFINE_string("data_dir", None, "Where the data lives.")
flags.DEFINE_integer("batch_size", 32, "Batch size.", lower_bound=1)
flags.DEFINE_multi_float("lr", [0.1], "Learning rates.")
flags.DEFINE_enum_class("color", Color.RED, Color, "A color.")
flags.DEFINE_multi_enum("mode", ["train"], ["train", "eval", "predict"], "Modes.")
flags.DEFINE_spaceseplist("tags", "a b", "Tags.")
flags.DEFINE_alias("bs", "batch_size")
flags.DEFINE_boolean("fast", False, "Go fast.")
flags.DEFINE_boolean("slow", False, "Go slow.")
flags.mark_flag_as_required("data_dir")
flags.mark_bool_flags_as_mutual_exclusive(["fast", "slow"])
flags.register_validator("batch_size", lambda v: v % 2 == 0, message="batch_size must be even")
def main(argv):
    print("argv", argv[1:])
    print(FLAGS.data_dir, FLAGS.batch_size, FLAGS.lr, FLAGS.color, FLAGS.mode, FLAGS.tags,
          FLAGS.fast)
    print(list(flags.flag_dict_to_args({"a": 1, "b": True, "c": [1, 2], "d": None, "e": False})))
    print(type(FLAGS["color"]).__name__, type(FLAGS["mode"]).__name__)
tf.app.run(main)
'''


def _run_flags_program(tmp_path, *args):
    prog = tmp_path / "prog.py"
    prog.write_text(_FLAGS_PROGRAM)
    out = subprocess.run([sys.executable, str(prog), *args], capture_output=True, text=True,
                         timeout=120)
    return out.returncode, out.stdout, out.stderr


def test_app_flags_program_matches_tensorflow(tmp_path):
    pytest.importorskip("absl")
    rc, out, _ = _run_flags_program(tmp_path, "--data_dir=/d", "--bs=4", "--color=blue",
                                    "--mode=eval", "--mode=train", "x.txt", "--unknown=3")
    assert rc == 0
    assert out.splitlines() == [  # TensorFlow 2.15's output
        "argv ['x.txt', '--unknown=3']",
        "/d 4 [0.1] Color.BLUE ['eval', 'train'] ['a', 'b'] False",
        "['--a=1', '--b', '--c=1,2', '--d', '--noe']",
        "EnumClassFlag MultiFlag"]
    flagfile = tmp_path / "flags.txt"
    flagfile.write_text("--batch_size=8\n--lr=0.5\n--lr=0.25\n")
    rc, out, _ = _run_flags_program(tmp_path, "--data_dir=/d", f"--flagfile={flagfile}",
                                    "--tags=p q")
    assert rc == 0
    assert out.splitlines()[1] == "/d 8 [0.5, 0.25] Color.RED ['train'] ['p', 'q'] False"
    for args, last_line in (
            (["--batch_size=8"], "absl.flags._exceptions.IllegalFlagValueError: flag "
             "--data_dir=None: Flag --data_dir must have a value other than None."),
            (["--data_dir=/d", "--batch_size=3"], "absl.flags._exceptions.IllegalFlagValueError:"
             " flag --batch_size=3: batch_size must be even"),
            (["--data_dir=/d", "--fast", "--slow"], "absl.flags._exceptions.IllegalFlagValueError:"
             " flags fast=True, slow=True: At most one of (fast, slow) must be True.")):
        rc, out, err = _run_flags_program(tmp_path, *args)
        assert rc == 1 and err.strip().splitlines()[-1] == last_line, err
    rc, out, _ = _run_flags_program(tmp_path, "--helpshort")
    assert rc == 1
    assert "  --[no]fast: Go fast.\n    (default: 'false')" in out
    assert "  --bs: Alias for --batch_size.\n    (default: '32')\n    (a positive integer)" in out
    assert out.rstrip().endswith("Try --helpfull to get a list of all flags.")


def test_app_flags_names_and_parse_on_read(monkeypatch):
    pytest.importorskip("absl")
    flags = tf.app.flags
    for name in ("ArgumentParser", "ArgumentSerializer", "BaseListParser", "BooleanFlag",
                 "BooleanParser", "CantOpenFlagFileError", "CsvListSerializer", "DEFINE",
                 "DEFINE_alias", "DEFINE_enum_class", "DEFINE_flag", "DEFINE_multi",
                 "DEFINE_multi_enum", "DEFINE_multi_enum_class", "DEFINE_multi_float",
                 "DEFINE_spaceseplist", "EnumClassFlag", "EnumClassListSerializer",
                 "EnumClassParser", "EnumClassSerializer", "EnumFlag", "EnumParser",
                 "FlagHolder", "FlagNameConflictsWithMethodError", "FloatParser",
                 "IntegerParser", "ListParser", "ListSerializer", "MultiEnumClassFlag",
                 "MultiFlag", "ValidationError", "WhitespaceSeparatedListParser",
                 "adopt_module_key_flags", "declare_key_flag", "disclaim_key_flags",
                 "doc_to_help", "flag_dict_to_args", "get_help_width",
                 "mark_bool_flags_as_mutual_exclusive", "mark_flag_as_required",
                 "mark_flags_as_mutual_exclusive", "mark_flags_as_required",
                 "multi_flags_validator", "override_value", "register_multi_flags_validator",
                 "register_validator", "set_default", "text_wrap", "validator"):
        assert getattr(flags, name) is not None, name
    assert flags.text_wrap("a b c d e f g", length=5) == "a b c\nd e f\ng"
    assert flags.doc_to_help("  Hello\n  world.  ") == "Hello world."
    assert flags.IntegerParser(lower_bound=1).parse("4") == 4
    assert flags.ListSerializer(",").serialize(["a", "b"]) == "a,b"

    def f(a, b=2):
        """doc"""
        return a + b

    dec = flags.tf_decorator.make_decorator(f, lambda *a, **k: f(*a, **k) * 10)
    assert (dec.__name__, dec.__doc__, dec(1)) == ("f", "doc", 30)
    assert flags.tf_decorator.unwrap(dec)[1] is f
    # TF 1.x: reading a flag before anything parsed the command line parses sys.argv
    flags.DEFINE_integer(flag_name="cf_gapfill_steps", default_value=3, docstring="Steps.")
    try:
        flags.FLAGS.unparse_flags()
        monkeypatch.setattr(sys, "argv", ["prog", "--cf_gapfill_steps=9"])
        assert flags.FLAGS.cf_gapfill_steps == 9
        assert flags.FLAGS.is_parsed()
    finally:
        delattr(flags.FLAGS, "cf_gapfill_steps")
        flags.FLAGS.unparse_flags()


# -- TF1-era programs (tests/compat/cf_programs/), TensorFlow 2.15's output inline ----------

_PROGRAM_OUTPUTS = {
    'cf_dtype_pipeline.py': (
        'None 4\n'
        "[[0, 0, 37, 119], [135, 217, 255, 255]] int32 [b'119', b'382'] complex64\n"
        "<dtype: 'int4'> True\n"
        'True gs://bucket/data/train/part-0\n'
    ),
    'cf_export_rename.py': (
        'tensorflow/serving/regress\n'
        '[[3.]]\n'
        "['variables']\n"
        "['saved_model.pb', 'variables']\n"
    ),
    'cf_flags_regression.py': (
        "extra args ['--verbose_extra']\n"
        'final loss 0.3689 steps 15\n'
        'model.ckpt True\n'
    ),
    'cf_gpu_growth_softmax.py': (
        'visible GPUs: []\n'
        '0 0.6931\n'
        '10 0.2511\n'
        '20 0.1899\n'
        'accuracy 0.984375\n'
        "['/device:CPU:0']\n"
    ),
    'cf_logical_cpus.py': (
        "['/job:localhost/replica:0/task:0/device:CPU:0', '/job:localhost/repli"
        "ca:0/task:0/device:CPU:1']\n"
        '[[9.]]\n'
        "[LogicalDevice(name='/device:CPU:0', device_type='CPU'), LogicalDevice"
        "(name='/device:CPU:1', device_type='CPU')]\n"
        'RuntimeError: Virtual devices cannot be modified after being initialized\n'
    ),
    'cf_optimizer_switches.py': (
        "{'constant_folding': False, 'arithmetic_optimization': False, 'disable"
        "_model_pruning': False, 'disable_meta_optimizer': False}\n"
        'autoclustering 2 1 True\n'
        '[[ 7. 10.]\n'
        ' [15. 22.]]\n'
        "''\n"
    ),
    'cf_testcase_suite.py': (
        "ran 5 failures 0 errors 0 skipped ['disabled here']\n"
        '2\n'
    ),
    'cf_xla_scope.py': (
        'True True\n'
        '[0.08250000327825546, -0.28369998931884766]\n'
    ),
}


@pytest.mark.parametrize("program", sorted(_PROGRAM_OUTPUTS))
def test_program_prints_what_tensorflow_prints(program):
    if program in ("cf_flags_regression.py", "cf_testcase_suite.py"):
        pytest.importorskip("absl")
    path = os.path.join(os.path.dirname(__file__), "cf_programs", program)
    env = {**os.environ, "TF_MODULE": "flowgraph"}
    out = subprocess.run([sys.executable, path], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout == _PROGRAM_OUTPUTS[program]
