"""``flowgraph ops [NAME]``: the description of every registered op type."""

from __future__ import annotations

import doctest
import subprocess
import sys

import pytest

from flowgraph.backends import op_info
from flowgraph.backends.op_info import UnknownOpError, describe_op, list_ops
from flowgraph.cli import main
from flowgraph.framework.registry import registered_ops


def _ops() -> list[str]:
    return sorted(n for n in registered_ops() if "Test" not in n)


@pytest.mark.slow
def test_every_op_is_described():
    for name in _ops():
        info = op_info.op_info(name)
        assert info["defined_at"].startswith(("flowgraph/ops/", "flowgraph/framework/")), name
        assert info["cost"] in ("cheap", "expensive", "blas", "async")
        text = describe_op(name)
        assert text.splitlines()[0] == name
        for label in ("declared:", "shape fn:", "gradient:", "cost:", "attrs:", "kernels:"):
            assert label in text, (name, label)


def test_description_names_places_dtypes_and_flags():
    info = op_info.op_info("MatMul")
    assert info["defined_at"].startswith("flowgraph/ops/math_ops.py:")
    assert info["gradient"].split()[1].startswith("flowgraph/ops/math_grad.py:")
    (kernel,) = info["kernels"]["CPU"]
    assert kernel["place"].startswith("flowgraph/backends/cpu/kernels_math.py:")
    assert kernel["fresh"] and info["cost"] == "blas"
    text = describe_op("ScalarSummary")
    assert "not differentiable" in text and "kernels_summary.py" in text
    text = describe_op("Relu")
    assert "in place: relu_in_place" in text
    assert "dtypes:" in describe_op("Cast")


def test_unknown_op_names_close_matches():
    with pytest.raises(UnknownOpError) as e:
        describe_op("Matmul")
    assert e.value.matches[0] == "MatMul"
    assert "close matches: MatMul" in str(e.value)
    with pytest.raises(UnknownOpError, match="flowgraph ops"):
        describe_op("zzzzzz")


def test_cli_lists_and_describes(capsys):
    assert main(["ops"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == sorted(registered_ops())
    assert main(["ops", "HeadAssertRange"]) == 0
    assert "flowgraph/ops/head_ops.py" in capsys.readouterr().out
    assert main(["ops", "HeadAsertRange"]) == 2
    assert "HeadAssertRange" in capsys.readouterr().err


def test_cli_in_a_fresh_process():
    run = [sys.executable, "-m", "flowgraph", "ops"]
    ok = subprocess.run([*run, "IteratorGetNext"], capture_output=True, text=True,
                        timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert "flowgraph/backends/cpu/kernels_data.py" in ok.stdout
    assert "expensive" in ok.stdout
    bad = subprocess.run([*run, "ScalarSumary"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert "ScalarSummary" in bad.stderr and not bad.stdout


def test_list_ops_names_the_backends():
    rows = {line.split()[0]: line for line in list_ops().splitlines()}
    cost, *backends = rows["MatMul"].replace(",", "").split()[1:]
    assert cost == "blas" and backends[0] == "CPU"
    assert rows["Cumsum"].split()[1:] == ["cheap", "CPU"]  # no kernel elsewhere


def test_docstring_examples():
    result = doctest.testmod(op_info, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
