"""tf.compat, tf.logging, tf.app / tf.flags and tf.tables_initializer."""

from __future__ import annotations

import logging
import subprocess
import sys
import types

import pytest

import flowgraph as tf
from flowgraph import app, compat, flags_compat, logging_compat
from flowgraph.ops.lookup_compat import initialize_all_tables, tables_initializer


# -- tf.compat --------------------------------------------------------------------------------
def test_compat_v1_is_the_top_module():
    import flowgraph.compat.v1 as v1

    assert compat.v1 is tf and v1 is tf
    assert sys.modules["flowgraph.compat.v1"] is tf


def test_text_helpers():
    assert compat.as_bytes("café") == "café".encode()
    assert compat.as_bytes(bytearray(b"ab")) == b"ab"
    assert compat.as_text("café".encode()) == "café"
    assert compat.as_str(b"x") == "x" and compat.as_str_any(3) == "3"
    assert compat.as_bytes("é", encoding="latin-1") == b"\xe9"
    with pytest.raises(TypeError, match="Expected binary or unicode string"):
        compat.as_bytes(3)
    with pytest.raises(TypeError, match="Expected binary or unicode string"):
        compat.as_text(None)
    import pathlib

    assert compat.path_to_str(pathlib.Path("/tmp/x")) == "/tmp/x"
    assert compat.path_to_str(5) == 5
    assert isinstance(b"", compat.bytes_or_text_types)
    assert compat.forward_compatible(2019, 1, 1) is True  # TF 2.15: horizon 2023-10-10
    assert compat.forward_compatible(2030, 1, 1) is False


def test_v2_switches():
    for fn in (compat.disable_v2_behavior, compat.disable_eager_execution,
               compat.disable_resource_variables, compat.disable_control_flow_v2,
               compat.disable_tensor_equality, compat.disable_v2_tensorshape):
        assert fn() is None
    assert compat.executing_eagerly() is False
    with pytest.raises(NotImplementedError, match=r"tf\.Session"):
        compat.enable_eager_execution()
    with pytest.raises(NotImplementedError, match="graph mode only"):
        compat.enable_v2_behavior()


# -- tf.logging -------------------------------------------------------------------------------
@pytest.fixture
def flowgraph_logger():
    logger = logging.getLogger("tensorflow")
    level = logger.level
    yield logger
    logger.setLevel(level)


def test_levels_and_verbosity(flowgraph_logger):
    assert (logging_compat.DEBUG, logging_compat.INFO, logging_compat.WARN,
            logging_compat.ERROR, logging_compat.FATAL) == (10, 20, 30, 40, 50)
    logging_compat.set_verbosity(logging_compat.ERROR)
    assert logging_compat.get_verbosity() == logging_compat.ERROR
    assert flowgraph_logger.level == logging.ERROR
    assert logging_compat.get_logger() is flowgraph_logger


def test_logging_functions(flowgraph_logger, caplog):
    logging_compat.set_verbosity(logging_compat.DEBUG)
    with caplog.at_level(logging.DEBUG, logger="tensorflow"):
        logging_compat.debug("d %d", 1)
        logging_compat.info("i %s", "x")
        logging_compat.warn("w")
        logging_compat.warning("w2")
        logging_compat.error("e")
        logging_compat.fatal("f")
        logging_compat.log(logging_compat.INFO, "l")
        logging_compat.vlog(logging_compat.DEBUG, "v")
        logging_compat.log_if(logging_compat.INFO, "yes %d", True, 1)
        logging_compat.log_if(logging_compat.INFO, "no", False)
        logging_compat.TaskLevelStatusMessage("status")
        logging_compat.flush()
    got = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert got == [("DEBUG", "d 1"), ("INFO", "i x"), ("WARNING", "w"), ("WARNING", "w2"),
                   ("ERROR", "e"), ("CRITICAL", "f"), ("INFO", "l"), ("DEBUG", "v"),
                   ("INFO", "yes 1"), ("ERROR", "status")]


def test_records_name_the_calling_line(flowgraph_logger, caplog):
    # TensorFlow attributes a record to the program's line (absl prints "prog.py:7]").
    logging_compat.set_verbosity(logging_compat.DEBUG)
    with caplog.at_level(logging.DEBUG, logger="tensorflow"):
        logging_compat.info("a")
        logging_compat.warning("b")
        logging_compat.log_if(logging_compat.INFO, "c", True)
        logging_compat.log_first_n(logging_compat.INFO, "d", 1)
        logging_compat.TaskLevelStatusMessage("e")
    assert {r.filename for r in caplog.records} == {"test_compat_modules.py"}


def test_import_gives_the_logger_its_handler_as_tensorflow_does():
    # TF 2.15: after `import tensorflow`, logging.getLogger("tensorflow").handlers holds a
    # StreamHandler, so hook lines print as "INFO:tensorflow:..." without any tf.logging call.
    code = ("import logging, flowgraph\n"
            "h = logging.getLogger('tensorflow').handlers\n"
            "print(len(h), h[0].formatter._fmt)\n"
            "logging.getLogger('tensorflow').setLevel(logging.INFO)\n"
            "logging.getLogger('tensorflow').info('from a hook')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.split() == ["1", "%(levelname)s:%(name)s:%(message)s"]
    assert "INFO:tensorflow:from a hook" in done.stderr


def test_root_configured_after_import_prints_each_record_once():
    # The command-line tools call logging.basicConfig after importing flowgraph, then
    # use_root_handlers(): one line per record, in the tool's format.
    code = ("import logging, flowgraph as tf\n"
            "logging.basicConfig(level=logging.INFO, format='%(levelname)s|%(message)s')\n"
            "tf.logging.use_root_handlers()\n"
            "logging.getLogger('tensorflow').info('saved')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stderr.splitlines() == ["INFO|saved"]


def test_verbosity_filters(flowgraph_logger, caplog):
    logging_compat.set_verbosity(logging_compat.WARN)
    with caplog.at_level(logging.NOTSET):
        logging_compat.info("hidden")
        logging_compat.warning("shown")
    assert [r.getMessage() for r in caplog.records if r.name == "tensorflow"] == ["shown"]


def test_log_every_n_and_first_n_count_per_call_site(flowgraph_logger, caplog):
    logging_compat.set_verbosity(logging_compat.INFO)
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        for i in range(7):
            logging_compat.log_every_n(logging_compat.INFO, "every %d", 3, i)
            logging_compat.log_first_n(logging_compat.INFO, "first %d", 2, i)
        logging_compat.log_first_n(logging_compat.INFO, "other site %d", 1, 0)
    assert [r.getMessage() for r in caplog.records] == [
        "every 0", "first 0", "first 1", "every 3", "every 6", "other site 0"]


def test_stderr_handler_added_once_when_logging_is_unconfigured(monkeypatch, capsys,
                                                                flowgraph_logger):
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])
    monkeypatch.setattr(flowgraph_logger, "handlers", [])
    monkeypatch.setattr(logging_compat, "_handler_added", False)
    logging_compat.set_verbosity(logging_compat.INFO)
    logging_compat.info("hello %d", 5)
    logging_compat.get_logger()
    assert len(flowgraph_logger.handlers) == 1
    assert capsys.readouterr().err == "INFO:tensorflow:hello 5\n"


def test_existing_root_configuration_is_kept(monkeypatch, flowgraph_logger):
    monkeypatch.setattr(flowgraph_logger, "handlers", [])
    monkeypatch.setattr(logging_compat, "_handler_added", False)
    monkeypatch.setattr(logging.getLogger(), "handlers", [logging.NullHandler()])
    logging_compat.get_logger()
    assert flowgraph_logger.handlers == []


# -- tf.flags ---------------------------------------------------------------------------------
@pytest.fixture
def fv():
    values = flags_compat.FlagValues()
    flags_compat.DEFINE_string("name", "model", "Run name.", flag_values=values)
    flags_compat.DEFINE_integer("steps", 10, "Steps.", lower_bound=1, flag_values=values)
    flags_compat.DEFINE_float("lr", 0.1, "Learning rate.", flag_values=values)
    flags_compat.DEFINE_boolean("shuffle", True, "Shuffle.", flag_values=values)
    flags_compat.DEFINE_bool("debug", False, "Debug.", flag_values=values)
    flags_compat.DEFINE_list("layers", "64,32", "Layer sizes.", flag_values=values)
    flags_compat.DEFINE_enum("mode", "train", ["train", "eval"], "Mode.", flag_values=values)
    flags_compat.DEFINE_multi_string("file", [], "Files.", flag_values=values)
    return values


def test_defaults_and_parsing(fv):
    rest = fv(["prog", "--name=exp1", "--steps", "20", "-lr=0.5", "--noshuffle", "--debug",
               "--layers=8,4,2", "--mode", "eval", "--file=a", "pos1", "--file", "b", "-",
               "--", "--steps=99"])
    assert rest == ["prog", "pos1", "-", "--steps=99"]
    assert (fv.name, fv.steps, fv.lr, fv.shuffle, fv.debug, fv.layers, fv.mode, fv.file) == (
        "exp1", 20, 0.5, False, True, ["8", "4", "2"], "eval", ["a", "b"])
    assert fv.is_parsed()
    assert fv.flag_values_dict()["steps"] == 20
    assert fv["steps"].default == 10 and "steps" in fv and len(fv) == 8


@pytest.mark.parametrize("text, value", [("true", True), ("False", False), ("1", True),
                                         ("0", False), ("t", True), ("no", False)])
def test_boolean_values(fv, text, value):
    fv(["prog", f"--shuffle={text}"])
    assert fv.shuffle is value


@pytest.mark.parametrize("argv, match", [
    (["--steps=abc"], "--steps: command-line value 'abc' is not a valid integer"),
    (["--steps=0"], "must be >= 1"),
    (["--mode=predict"], r"must be one of \['train', 'eval'\]"),
    (["--shuffle=maybe"], "expected true/false"),
    (["--lr"], "--lr needs a value"),
])
def test_illegal_values(fv, argv, match):
    with pytest.raises(flags_compat.IllegalFlagValueError, match=match):
        fv(["prog", *argv])


def test_unknown_flags(fv):
    with pytest.raises(flags_compat.UnrecognizedFlagError, match="Unknown command line flag 'x'"):
        fv(["prog", "--x=1"])
    with pytest.raises(flags_compat.UnrecognizedFlagError, match="Did you mean --steps"):
        fv(["prog", "--step=1"])
    with pytest.raises(flags_compat.UnrecognizedFlagError, match="flag '3'"):
        fv(["prog", "-3"])  # as in absl: a leading dash always means a flag
    with pytest.raises(flags_compat.IllegalFlagValueError, match="does not take an argument"):
        fv(["prog", "--noshuffle=1"])
    assert fv(["prog", "--lr", "-3"]) == ["prog"]  # but a flag's value may start with one
    assert fv.lr == -3.0
    assert fv(["prog", "--x=1", "--steps=3"], known_only=True) == ["prog", "--x=1"]
    assert fv.steps == 3


def test_lazy_parse_of_sys_argv_on_first_access(fv, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["script.py", "--steps=7"])
    assert not fv.is_parsed()
    assert fv.steps == 7 and fv.is_parsed()
    monkeypatch.setattr(sys, "argv", ["script.py", "--steps=8"])
    assert fv.steps == 7  # parsed once
    fv.unparse_flags()
    assert fv.steps == 8


def test_assign_set_default_delete_and_duplicates(fv):
    fv.mark_as_parsed()
    fv.lr = "0.25"
    assert fv.lr == 0.25
    fv.set_default("steps", 50)
    assert fv.steps == 50
    with pytest.raises(AttributeError, match="unknown flag 'nope'"):
        fv.nope = 1
    with pytest.raises(AttributeError, match="No flag named 'nope'"):
        _ = fv.nope
    with pytest.raises(flags_compat.DuplicateFlagError, match="'name' is defined twice"):
        flags_compat.DEFINE_string("name", "", "again", flag_values=fv)
    del fv.name
    flags_compat.DEFINE_string("name", "new", "again", flag_values=fv)
    assert fv.name == "new"
    with pytest.raises(flags_compat.IllegalFlagValueError, match="default value"):
        flags_compat.DEFINE_integer("bad", "x", "", flag_values=fv)


def test_help_exits(fv, capsys):
    with pytest.raises(SystemExit) as info:
        fv(["prog", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "--steps: Steps." in out and "(default: 10; integer)" in out


def test_global_flags_namespace():
    import flowgraph as tf
    from flowgraph import flags

    assert app.flags is tf.flags is tf.app.flags is flags
    try:
        from absl import flags as absl_flags
    except ImportError:  # flowgraph's own flags stand in for absl's
        assert flags.FLAGS is flags_compat.FLAGS
    else:  # TensorFlow's: absl's FLAGS, parsed on first read
        assert flags.FlagValues is absl_flags.FlagValues
        assert flags.FLAGS._wrapped is absl_flags.FLAGS


# -- tf.app.run -------------------------------------------------------------------------------
def test_app_run_parses_known_flags_and_exits_with_main_result(monkeypatch):
    app.flags.DEFINE_integer("compat_test_epochs", 1, "Epochs.")
    try:
        seen = {}

        def main(argv):
            seen["argv"] = argv
            seen["epochs"] = app.flags.FLAGS.compat_test_epochs
            return 3

        with pytest.raises(SystemExit) as info:
            app.run(main, argv=["prog", "--compat_test_epochs=4", "--other", "x"])
        assert info.value.code == 3
        assert seen == {"argv": ["prog", "--other", "x"], "epochs": 4}

        fake_main = types.ModuleType("__main__")
        fake_main.main = lambda argv: None
        monkeypatch.setitem(sys.modules, "__main__", fake_main)
        monkeypatch.setattr(sys, "argv", ["prog"])
        with pytest.raises(SystemExit) as info:
            app.run()
        assert info.value.code is None
        monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
        with pytest.raises(ValueError, match="no `main` given"):
            app.run()
    finally:
        del app.flags.FLAGS.compat_test_epochs
        app.flags.FLAGS.unparse_flags()


# -- tf.tables_initializer --------------------------------------------------------------------
def test_tables_initializer_without_tables(sess):
    init = tables_initializer()
    assert init.type == "NoOp" and init.name == "init_all_tables"
    assert sess.run(init) is None


def test_tables_initializer_runs_the_collection(sess):
    a = tf.Variable(0, name="a")
    b = tf.Variable(0, name="b")
    tf.add_to_collection(tf.GraphKeys.TABLE_INITIALIZERS, tf.assign(a, 5).op)
    tf.add_to_collection(tf.GraphKeys.TABLE_INITIALIZERS, tf.assign(b, 7).op)
    sess.run(tf.global_variables_initializer())
    init = tables_initializer(name="tables")
    assert init.name == "tables"
    sess.run(init)
    assert sess.run([a, b]) == [5, 7]
    with pytest.warns(DeprecationWarning, match="tables_initializer"):
        assert initialize_all_tables().name.startswith("init_all_tables")
