"""The "not implemented" hints of `flowgraph.framework.missing_api` name only names that
are still missing, and what they suggest exists."""

import re

import pytest

import flowgraph as tf
from flowgraph.framework.missing_api import _HINTS


def _lookup(key: str):
    module, _, name = key.rpartition(".")
    return getattr(getattr(tf, module) if module else tf, name)


@pytest.mark.parametrize("key", sorted(_HINTS))
def test_every_hinted_name_is_still_missing_and_its_error_gives_the_hint(key):
    with pytest.raises(AttributeError) as info:
        _lookup(key)
    assert "is not implemented in flowgraph; " in str(info.value)
    assert _HINTS[key] in str(info.value)


def test_every_tf_name_a_hint_suggests_exists():
    for hint in set(_HINTS.values()):
        for name in re.findall(r"tf\.([\w.]+)", hint):
            _lookup(name.rstrip("."))


def test_meta_graph_names_are_implemented():
    assert callable(tf.train.import_meta_graph) and callable(tf.train.export_meta_graph)
