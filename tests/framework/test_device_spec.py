"""DeviceSpec parsing, printing and merging (TensorFlow 1.x semantics)."""

import pytest

from flowgraph.framework.device_spec import (
    DeviceSpec,
    canonical_device,
    device_string,
    merge_device,
)


@pytest.mark.parametrize(("spec", "want"), [
    ("/job:a/replica:1/task:2/device:GPU:3", "/job:a/replica:1/task:2/device:GPU:3"),
    ("/device:gpu:1", "/device:GPU:1"),
    ("/cpu", "/device:CPU:*"),
    ("/cpu:*", "/device:CPU:*"),
    ("/device:CPU:*", "/device:CPU:*"),
    ("job:a/cpu:0", "/job:a/device:CPU:0"),
    ("/job:a/task:1/cpu:0", "/job:a/task:1/device:CPU:0"),
    ("/GPU:0", "/device:GPU:0"),
    ("", ""),
])
def test_from_string_to_string(spec, want):
    assert DeviceSpec.from_string(spec).to_string() == want
    assert canonical_device(spec) == want


def test_fields():
    d = DeviceSpec.from_string("/job:a/replica:1/task:2/device:GPU:3")
    assert (d.job, d.replica, d.task, d.device_type, d.device_index) == ("a", 1, 2, "GPU", 3)
    e = DeviceSpec.from_string("/job:a")
    assert (e.replica, e.task, e.device_type, e.device_index) == (None, None, None, None)


@pytest.mark.parametrize("bad", ["/foo:1", "/device:CPU", "/task:x", "/device:CPU:0/gpu:1",
                                 "cpu0"])
def test_parse_errors(bad):
    with pytest.raises(ValueError, match="Invalid device specification"):
        DeviceSpec.from_string(bad)


def test_constructor_and_mutation():
    d = DeviceSpec(job="ps", replica=0, task=1, device_type="cpu", device_index=0)
    assert d.to_string() == "/job:ps/replica:0/task:1/device:CPU:0"
    assert DeviceSpec(job="ps", task=1).to_string() == "/job:ps/task:1"
    e = DeviceSpec()
    e.job = "q"
    assert e.to_string() == "/job:q"
    assert e.parse_from_string("/job:a").to_string() == "/job:a"


def test_merge_from_is_in_place():
    d = DeviceSpec.from_string("/job:a/cpu:0")
    assert d.merge_from(DeviceSpec.from_string("/gpu:1")) is None
    assert d.to_string() == "/job:a/device:GPU:1"


def test_make_merged_spec_and_replace():
    base = DeviceSpec.from_string("/job:a/cpu:0")
    merged = base.make_merged_spec(DeviceSpec.from_string("/task:1"))
    assert merged.to_string() == "/job:a/task:1/device:CPU:0"
    assert base.to_string() == "/job:a/device:CPU:0"
    assert base.replace(job="x").to_string() == "/job:x/device:CPU:0"
    with pytest.raises(TypeError):
        base.replace(color="red")


def test_equality_hash_repr():
    a = DeviceSpec.from_string("/cpu:0")
    b = DeviceSpec.from_string("/device:CPU:0")
    assert a == b and hash(a) == hash(b)
    assert a != DeviceSpec.from_string("/cpu:1")
    assert repr(a) == ("<DeviceSpec(job=None, replica=None, task=None, device_type=CPU, "
                       "device_index=0)>")


def test_compatibility():
    full = DeviceSpec.from_string("/job:w/replica:0/task:1/device:CPU:0")
    assert DeviceSpec.from_string("/job:w/cpu:0").is_compatible_with(full)
    assert not DeviceSpec.from_string("/gpu:0").is_compatible_with(full)


def test_merge_device_strings():
    assert merge_device("/job:ps/device:CPU:0", "/gpu:1") == "/job:ps/device:GPU:1"
    assert merge_device("/device:CPU:0", "/gpu:*") == "/device:GPU:0"
    assert merge_device("", "/cpu:0") == "/device:CPU:0"
    assert merge_device("/cpu:0", "") == "/device:CPU:0"


def test_device_string():
    assert device_string(None) == ""
    assert device_string(DeviceSpec(job="a")) == "/job:a"
    assert device_string(b"/cpu:0") == "/device:CPU:0"
    with pytest.raises(TypeError):
        device_string(3)
