"""tf.data.Options and its option groups: TF's members, defaults, type checks, merge,
and the options that act on a flowgraph pipeline (values from TF 2.15's compat.v1)."""

import logging
import threading
import time

import pytest

import flowgraph as tf

E = tf.data.experimental


def test_members_and_defaults():
    assert [a for a in dir(tf.data.Options) if not a.startswith("_")] == [
        "autotune", "deterministic", "experimental_deterministic", "experimental_distribute",
        "experimental_external_state_policy", "experimental_optimization",
        "experimental_slack", "experimental_symbolic_checkpoint", "experimental_threading",
        "experimental_warm_start", "merge", "threading"]
    o = tf.data.Options()
    for name in ("deterministic", "experimental_deterministic", "experimental_slack",
                 "experimental_external_state_policy", "experimental_symbolic_checkpoint",
                 "experimental_warm_start"):
        assert getattr(o, name) is None
    assert o.threading is o.experimental_threading
    fields = {
        E.OptimizationOptions: ["apply_default_optimizations", "filter_fusion",
                                "filter_parallelization", "inject_prefetch",
                                "map_and_batch_fusion", "map_and_filter_fusion", "map_fusion",
                                "map_parallelization", "noop_elimination", "parallel_batch",
                                "shuffle_and_repeat_fusion"],
        E.ThreadingOptions: ["max_intra_op_parallelism", "private_threadpool_size"],
        E.DistributeOptions: ["auto_shard_policy", "num_devices"],
        E.AutotuneOptions: ["autotune_algorithm", "cpu_budget", "enabled", "ram_budget"],
    }
    for cls, names in fields.items():
        assert [a for a in dir(cls) if not a.startswith("_")] == names
    assert tf.data.ThreadingOptions is E.ThreadingOptions
    assert {n: getattr(o.experimental_optimization, n)
            for n in fields[E.OptimizationOptions]} == dict.fromkeys(
                fields[E.OptimizationOptions])
    assert o.experimental_distribute.auto_shard_policy is E.AutoShardPolicy.AUTO
    assert o.experimental_distribute.num_devices is None and o.autotune.enabled is None
    assert type(o.autotune) is E.AutotuneOptions
    assert tf.data.Dataset.range(2).options() == tf.data.Options()
    with pytest.raises(TypeError, match="unhashable"):
        hash(o)


def test_type_checks_match_tensorflow():
    o = tf.data.Options()
    bad = [(o, "deterministic", 1, "<class 'bool'>"),
           (o, "experimental_deterministic", None, "<class 'bool'>"),
           (o, "experimental_slack", 1, "<class 'bool'>"),
           (o.threading, "private_threadpool_size", "8", "<class 'int'>"),
           (o.threading, "private_threadpool_size", 8.0, "<class 'int'>"),
           (o.experimental_optimization, "map_parallelization", 1, "<class 'bool'>"),
           (o.experimental_distribute, "auto_shard_policy", 1, "AutoShardPolicy"),
           (o.autotune, "ram_budget", 2.0, "<class 'int'>"),
           (o.autotune, "autotune_algorithm", 1, "AutotuneAlgorithm"),
           (o, "experimental_external_state_policy", "warn", "ExternalStatePolicy"),
           (o, "threading", 3, "ThreadingOptions"),
           (o, "experimental_optimization", None, "OptimizationOptions")]
    for group, name, value, ty in bad:
        with pytest.raises(TypeError, match=f'Property "{name.replace("experimental_d", "d")}"'
                                            f' must be of type .*{ty}'):
            setattr(group, name, value)
    with pytest.raises(AttributeError, match="Cannot set the property bogus on Options"):
        o.bogus = True
    with pytest.raises(AttributeError, match="property bogus on OptimizationOptions"):
        o.experimental_optimization.bogus = True
    # TF accepts these (bool is an int; no range checks).
    o.threading.private_threadpool_size = -1
    o.threading.max_intra_op_parallelism = True
    o.experimental_distribute.auto_shard_policy = E.AutoShardPolicy.DATA
    o.autotune.autotune_algorithm = E.AutotuneAlgorithm.HILL_CLIMB
    o.experimental_external_state_policy = E.ExternalStatePolicy.FAIL
    o.experimental_optimization.map_parallelization = True
    new = E.ThreadingOptions()
    o.experimental_threading = new
    assert o.threading is new and o.threading.private_threadpool_size is None
    with pytest.raises(TypeError, match="unexpected keyword"):
        tf.data.Options(deterministic=True)


def test_merge_later_value_wins_with_warning(caplog):
    a, b = tf.data.Options(), tf.data.Options()
    a.deterministic, b.deterministic = True, False
    a.threading.private_threadpool_size = 1
    b.threading.private_threadpool_size = 2
    b.experimental_slack = True
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        m = a.merge(b)
    assert "Changing the value of option deterministic from True to False." in caplog.text
    assert (m.deterministic, m.threading.private_threadpool_size, m.experimental_slack) == (
        False, 2, True)
    assert m is not a and a.deterministic is True
    # An option at its default never overrides (auto_shard_policy's default is AUTO).
    d, e = tf.data.Options(), tf.data.Options()
    d.experimental_distribute.auto_shard_policy = E.AutoShardPolicy.DATA
    e.experimental_distribute.auto_shard_policy = E.AutoShardPolicy.AUTO
    for merged in (d.merge(e), d.merge(tf.data.Options()), tf.data.Options().merge(d)):
        assert merged.experimental_distribute.auto_shard_policy is E.AutoShardPolicy.DATA
    assert e == tf.data.Options() and d != e
    with pytest.raises(TypeError, match="Could not merge incompatible options of type "
                                        "<class 'int'>"):
        a.merge(3)
    # with_options down a pipeline merges the same way; options() sees the merged ones.
    c = tf.data.Options()
    c.threading.private_threadpool_size = 4
    ds = tf.data.Dataset.range(3).with_options(a).with_options(c).map(lambda x: x + 1)
    assert ds.options().deterministic is True
    assert ds.options().threading.private_threadpool_size == 4
    assert ds.with_options(b).options().deterministic is False


def _slow_identity_ds(fn, n, parallel, deterministic=None):
    return tf.data.Dataset.range(n).map(
        lambda x: tf.py_func(fn, [x], tf.int64, stateful=True), num_parallel_calls=parallel,
        deterministic=deterministic)


def test_deterministic_false_lets_parallel_map_reorder():
    """Four calls in flight: element 4 starts only once an element has been handed on,
    and element 0 waits for element 4. In order, 0 must come first, so its wait times
    out; with deterministic=False a finished later element is handed on first."""

    def run(deterministic, patience, map_deterministic=None):
        started4 = threading.Event()
        waited = []

        def f(x):
            if x == 0:
                waited.append(started4.wait(patience))
            elif x == 4:
                started4.set()
            return x

        ds = _slow_identity_ds(f, 8, 4, map_deterministic)
        if deterministic is not None:
            opts = tf.data.Options()
            opts.experimental_deterministic = deterministic
            ds = ds.with_options(opts)
        return [int(v) for v in tf.data.NumpyIterator(ds)], waited

    assert run(None, 0.2) == (list(range(8)), [False])
    assert run(True, 0.2) == (list(range(8)), [False])
    got, waited = run(False, 10)
    assert sorted(got) == list(range(8)) and got[0] != 0 and waited == [True]
    # The map's own `deterministic` (TF 2's argument) overrides the options'.
    assert run(False, 0.2, map_deterministic=True) == (list(range(8)), [False])
    got, waited = run(True, 10, map_deterministic=False)
    assert got[0] != 0 and waited == [True]


def test_private_threadpool_size_caps_parallel_map():
    def peak(cap):
        lock, state = threading.Lock(), {"now": 0, "peak": 0}

        def f(x):
            with lock:
                state["now"] += 1
                state["peak"] = max(state["peak"], state["now"])
            time.sleep(0.02)
            with lock:
                state["now"] -= 1
            return x

        ds = _slow_identity_ds(f, 12, 4)
        if cap is not None:
            opts = tf.data.Options()
            opts.threading.private_threadpool_size = cap
            ds = ds.map(lambda x: x).with_options(opts)
        assert [int(v) for v in tf.data.NumpyIterator(ds)] == list(range(12))
        return state["peak"]

    assert peak(1) == 1
    assert peak(2) <= 2
    assert peak(0) <= 4  # not positive: no private pool


def test_numpy_iterator_next():
    it = tf.data.NumpyIterator(tf.data.Dataset.range(2))
    assert (int(it.next()), int(next(it))) == (0, 1)
    with pytest.raises(StopIteration):
        it.next()
