"""Backend plugins discovered through the ``flowgraph.backends`` entry-point group.

Each test writes a throwaway distribution (a package plus a ``*.dist-info`` with
``METADATA`` and ``entry_points.txt``) into ``tmp_path``, puts it on ``sys.path`` and
reloads discovery; the fixture removes it and reloads again afterwards.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
import warnings

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import backends

FAKE_BACKEND = '''
import numpy as np

from flowgraph.backends.base import Backend, Device

CALLS = []


class FakeBackend(Backend):
    """Records every kernel call and computes with NumPy."""

    device_type = "FAKE"

    def list_devices(self, count=None):
        n = 1 if count is None else int(count)
        return [Device(self, "FAKE", i, memory_limit=1 << 20, description="fake device")
                for i in range(n)]

    def load_kernels(self):
        def add(x, y):
            CALLS.append("Add")
            return np.add(x, y)

        def mul(x, y):
            CALLS.append("Mul")
            return np.multiply(x, y)

        self.register_kernel("Add", add)
        self.register_kernel("AddV2", add)  # what `+` builds (TensorFlow 2.15's type)
        self.register_kernel("Mul", mul)

    def to_host(self, value, device):
        CALLS.append("to_host")
        return value

    def from_host(self, value, device):
        CALLS.append("from_host")
        return value


backend = FakeBackend()
'''


def _write_dist(root, package: str, source: str, entry: str) -> None:
    pkg = root / package
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(source))
    info = root / f"{package}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[flowgraph.backends]\n{entry}\n")


@pytest.fixture
def plugin_dir(tmp_path):
    """A sys.path entry for throwaway distributions; restores discovery afterwards."""
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in ("fakefg", "brokenfg"):
        sys.modules.pop(name, None)
    importlib.invalidate_caches()
    backends.reload_backends()
    assert "FAKE" not in backends.get_backends()


def test_fake_plugin_device_is_listed_and_used(plugin_dir):
    _write_dist(plugin_dir, "fakefg", FAKE_BACKEND, "fake = fakefg:backend")
    loaded = backends.reload_backends()
    assert "FAKE" in loaded and "CPU" in loaded
    names = [d.name for d in backends.list_devices()]
    assert "/job:localhost/replica:0/task:0/device:FAKE:0" in names
    local = {d.device_type: d for d in backends.list_local_devices()}
    assert local["FAKE"].memory_limit == 1 << 20

    calls = sys.modules["fakefg"].CALLS
    x = tf.placeholder(tf.float64, [2, 3], name="x")
    with tf.device("/device:FAKE:0"):
        y = tf.add(x, 1.0, name="on_fake")
    z = tf.sin(y, name="on_cpu")  # no Sin kernel on FAKE: default placement is the CPU
    v = np.arange(6.0).reshape(2, 3)
    md = tf.RunMetadata()
    with tf.Session() as s:
        out = s.run(z, {x: v}, options=tf.RunOptions(trace_level=3), run_metadata=md)
        assert "/job:localhost/replica:0/task:0/device:FAKE:0" in [
            d.name for d in s.list_devices()]
    np.testing.assert_allclose(out, np.sin(v + 1.0))
    assert calls.count("Add") == 1
    assert "to_host" in calls  # the Send from FAKE:0 to CPU:0 went through the backend
    where = {n.node_name: d.device for d in md.step_stats.dev_stats for n in d.node_stats}
    assert where["on_fake"].endswith("device:FAKE:0")
    assert where["on_cpu"].endswith("device:CPU:0")

    # An op without a FAKE kernel pinned to FAKE fails with the devices that have it.
    with tf.device("/device:FAKE:0"):
        w = tf.sin(x, name="no_kernel")
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="no_kernel") as info:
            s.run(w, {x: v})
    assert "/device:CPU:0" in str(info.value)


def test_broken_plugin_warns_once_and_flowgraph_still_works(plugin_dir):
    _write_dist(plugin_dir, "brokenfg", "raise ImportError('broken on purpose')\n",
                "broken = brokenfg:backend")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = backends.reload_backends()
    relevant = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(relevant) == 1
    assert "'broken'" in str(relevant[0].message)
    assert "broken on purpose" in str(relevant[0].message)
    assert "CPU" in loaded
    with tf.Session() as s:
        assert s.run(tf.constant(2.0) * 3.0) == 6.0


def test_discovery_is_cached():
    first = backends.get_backends()
    assert backends.get_backends() is first
    assert backends.get_backend("cpu").device_type == "CPU"
    with pytest.raises(ValueError, match="No backend for device type 'TPU'"):
        backends.get_backend("TPU")
