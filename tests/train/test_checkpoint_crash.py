"""Crash safety: a process killed (SIGKILL) while saving never leaves a torn checkpoint.

A child process saves checkpoints in a loop (every variable holds the step number);
the parent kills it at a random moment after its first save (which is slow: lazy
imports), 6 times (20 in the slow run), restarting it each time (the child resumes from the latest
checkpoint; a few children start ahead of time and wait for "go" on stdin, so that
interpreter start-up does not dominate). After every kill the latest checkpoint restores
and its variables all hold the step in its name, and every checkpoint in the directory
is readable: in TensorFlow's format (the default) every visible ``.index`` has its data
file, whole; in the one-file format (the slow run) every file is whole.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.train import checkpoint_state as cs
from flowgraph.train.checkpoint_utils import NewCheckpointReader
from flowgraph.train.saver import Saver

SHAPES = [(60, 50), (20000,), (3, 7, 11)]

CHILD = textwrap.dedent("""
    import os, sys
    import numpy as np
    import flowgraph as tf
    from flowgraph.train import checkpoint_state as cs
    from flowgraph.train.saver import Saver

    directory = sys.argv[1]
    shapes = {shapes!r}
    variables = [tf.Variable(np.zeros(s), name="v%d" % i) for i, s in enumerate(shapes)]
    saver = Saver(max_to_keep=3, format=sys.argv[2])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if sys.stdin.readline().strip() != "go":  # wait until the previous child is killed
            sys.exit(0)  # the parent gave up (stdin closed)
        step = 0
        latest = cs.latest_checkpoint(directory)
        if latest is not None:
            saver.restore(sess, latest)
            step = int(sess.run(variables[0])[0, 0]) + 1
            saver.recover_last_checkpoints(
                cs.get_checkpoint_state(directory).all_model_checkpoint_paths)
        first = step
        while True:
            for v, s in zip(variables, shapes):
                v.load(np.full(s, float(step)), sess)
            saver.save(sess, os.path.join(directory, "model.ckpt"), global_step=step)
            if step == first:  # one save done (the slow first one: lazy imports): kill now
                print("ready", step, flush=True)
            step += 1
""").format(shapes=SHAPES)


def _check_directory(directory: str, saver: Saver, sess, variables) -> int | None:
    """Restore the latest checkpoint; check consistency; return its step (or None)."""
    for name in os.listdir(directory):
        m = re.fullmatch(r"(model\.ckpt-(\d+))(\.index)?", name)
        if m:  # every visible checkpoint is whole
            reader = NewCheckpointReader(os.path.join(directory, m.group(1)))
            step = float(m.group(2))
            for i in range(len(SHAPES)):
                assert np.all(reader.get_tensor(f"v{i}") == step), name
            reader.close()
    latest = cs.latest_checkpoint(directory)
    if latest is None:
        return None
    saver.restore(sess, latest)
    step = int(latest.rsplit("-", 1)[1])
    for v, shape in zip(variables, SHAPES):
        value = sess.run(v)
        assert value.shape == shape
        assert np.all(value == step), f"{latest}: {v.name} does not hold step {step}"
    return step


def _kill_repeatedly(kills: int, waiting: list, spawn, directory, variables, saver) -> list:
    rng = random.Random(1234)
    steps = []
    with tf.Session() as sess:
        for i in range(kills):
            child = waiting.pop(0)
            if i + len(waiting) < kills - 1:
                waiting.append(spawn())  # keep children starting up ahead of time
            try:
                try:
                    child.stdin.write("go\n")
                    child.stdin.flush()
                except BrokenPipeError:  # the child died while it started: say why
                    child.wait()
                    raise AssertionError(f"child exited with {child.returncode} before "
                                         f"'go': {child.stderr.read()[-3000:]}") from None
                line = child.stdout.readline()
                assert line.startswith("ready"), (line, child.stderr.read())
                time.sleep(rng.uniform(0.0, 0.12))
            finally:
                child.send_signal(signal.SIGKILL)
                child.wait()
                for stream in (child.stdin, child.stdout, child.stderr):
                    stream.close()
            steps.append(_check_directory(str(directory), saver, sess, variables))
    return steps


@pytest.mark.parametrize("fmt,kills", [
    ("tensorflow", 6),
    pytest.param("tensorflow", 20, marks=pytest.mark.slow),
    pytest.param("flowgraph", 20, marks=pytest.mark.slow)])
def test_sigkill_during_saves_never_tears_a_checkpoint(tmp_path, fmt, kills):
    if not hasattr(signal, "SIGKILL"):
        pytest.skip("needs SIGKILL")
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    directory = tmp_path / "ckpt"
    directory.mkdir()
    variables = [tf.Variable(np.zeros(s), name=f"v{i}") for i, s in enumerate(SHAPES)]
    saver = Saver()

    def spawn():
        return subprocess.Popen([sys.executable, str(script), str(directory), fmt],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    waiting = [spawn() for _ in range(3)]
    try:
        steps = _kill_repeatedly(kills, waiting, spawn, directory, variables, saver)
    finally:
        for child in waiting:  # only left over when the test failed
            child.kill()
            child.wait()
    known = [s for s in steps if s is not None]
    assert len(known) == kills, steps  # every run got its first save done
    assert known == sorted(known) and known[-1] > known[0]  # resumed, never went back
    state = cs.get_checkpoint_state(str(directory))
    assert len(state.all_model_checkpoint_paths) <= 3  # max_to_keep=3
