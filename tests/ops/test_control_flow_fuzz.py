"""Random programs of nested tf.cond / tf.while_loop over int64 scalars, each compared
against a plain-Python interpretation of the same program.

A program is a small expression tree::

    expr := x | y | i | acc | const
          | (a OP b)                       OP in + - * max min (products taken mod 1009)
          | cond(a CMP b, expr, expr)
          | loop(limit, init, body)        acc = init; for i in range(limit % 5):
                                               acc = body(i, acc)

with control flow nested up to depth 3 (loops inside loops, conds inside loop bodies,
loops inside branches). The generator is seeded, so a failure names a reproducible
program.
"""

import random

import numpy as np

import flowgraph as tf
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.control_flow_loops import while_loop

N_PROGRAMS = 200
MAX_DEPTH = 3
_BIN = ["+", "-", "*", "max", "min"]
_CMP = ["<", "<=", ">", "==", "!="]


def gen(rng: random.Random, depth: int, names: list[str], size: int = 3):
    """A random expression using variables `names`, with control flow nested at most
    `depth` more levels."""
    r = rng.random()
    if size <= 0 or r < 0.25:
        if rng.random() < 0.7:
            return ("var", rng.choice(names))
        return ("const", rng.randint(-5, 9))
    if depth > 0 and r < 0.45:
        return ("cond", rng.choice(_CMP), gen(rng, 0, names, 1), gen(rng, 0, names, 1),
                gen(rng, depth - 1, names, size - 1), gen(rng, depth - 1, names, size - 1))
    if depth > 0 and r < 0.65:
        inner = [*names, "i", "acc"] if "acc" not in names else [*names, "i2", "acc2"]
        return ("loop", gen(rng, 0, names, 1), gen(rng, 0, names, 1),
                gen(rng, depth - 1, inner, size - 1), rng.choice([1, 2, 10]),
                inner[-2], inner[-1])
    return ("bin", rng.choice(_BIN), gen(rng, depth, names, size - 1),
            gen(rng, depth, names, size - 1))


def _py_bin(op, a, b):
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return (a * b) % 1009
    return max(a, b) if op == "max" else min(a, b)


def _py_cmp(op, a, b):
    return {"<": a < b, "<=": a <= b, ">": a > b, "==": a == b, "!=": a != b}[op]


def run_py(e, env: dict) -> int:
    kind = e[0]
    if kind == "var":
        return env[e[1]]
    if kind == "const":
        return e[1]
    if kind == "bin":
        return _py_bin(e[1], run_py(e[2], env), run_py(e[3], env))
    if kind == "cond":
        taken = _py_cmp(e[1], run_py(e[2], env), run_py(e[3], env))
        return run_py(e[4] if taken else e[5], env)
    _, limit, init, body, _par, iname, aname = e
    n = run_py(limit, env) % 5
    acc = run_py(init, env)
    for i in range(n):
        acc = run_py(body, {**env, iname: i, aname: acc})
    return acc


def _tf_bin(op, a, b):
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return (a * b) % 1009
    return tf.maximum(a, b) if op == "max" else tf.minimum(a, b)


def _tf_cmp(op, a, b):
    return {"<": tf.less, "<=": tf.less_equal, ">": tf.greater, "==": tf.equal,
            "!=": tf.not_equal}[op](a, b)


def build_tf(e, env: dict):
    kind = e[0]
    if kind == "var":
        return env[e[1]]
    if kind == "const":
        return tf.constant(e[1], dtype=tf.int64)
    if kind == "bin":
        return _tf_bin(e[1], build_tf(e[2], env), build_tf(e[3], env))
    if kind == "cond":
        pred = _tf_cmp(e[1], build_tf(e[2], env), build_tf(e[3], env))
        return cond(pred, lambda: build_tf(e[4], env), lambda: build_tf(e[5], env))
    _, limit, init, body, par, iname, aname = e
    n = build_tf(limit, env) % 5
    _, acc = while_loop(lambda i, acc: i < n,
                        lambda i, acc: (i + 1, build_tf(body, {**env, iname: i, aname: acc})),
                        [tf.constant(0, dtype=tf.int64), build_tf(init, env)],
                        parallel_iterations=par)
    return acc


def test_random_control_flow_programs_match_python():
    rng = random.Random(20261122)
    inputs = [(0, 0), (3, -2), (7, 4)]
    checked = loops = conds = 0
    for k in range(N_PROGRAMS):
        prog = gen(rng, MAX_DEPTH, ["x", "y"], size=4)
        text = repr(prog)
        loops += text.count("'loop'")
        conds += text.count("'cond'")
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.int64, [])
            y = tf.placeholder(tf.int64, [])
            out = build_tf(prog, {"x": x, "y": y})
            with tf.Session(graph=g) as sess:
                for xv, yv in inputs:
                    want = run_py(prog, {"x": xv, "y": yv})
                    got = sess.run(out, {x: xv, y: yv})
                    assert got == want, f"program {k}: {prog} with x={xv}, y={yv}"
                    assert np.asarray(got).dtype == np.int64
                    checked += 1
    assert checked == N_PROGRAMS * len(inputs)
    assert loops > 50 and conds > 50  # the generator exercises both constructs
