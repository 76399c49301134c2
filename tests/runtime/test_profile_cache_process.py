"""Device profiles measured in one process are read, not measured again, by the next
(the disk cache of `flowgraph.backends.tuning_cache`), as a user's second run sees it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = """
import json, sys
from flowgraph.backends import list_devices
from flowgraph.runtime import cost_model
if sys.argv[1] == "second":
    def refuse(device):
        raise SystemExit("measured again")
    cost_model.measure = refuse
cpu = next(d for d in list_devices() if d.device_type == "CPU")
print(json.dumps(cost_model.profile_of(cpu).__dict__))
"""


def _run(tmp_path, which: str) -> dict:
    env = {**os.environ, "FLOWGRAPH_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", SCRIPT, which], env=env, check=True,
                         capture_output=True, text=True, timeout=120)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_second_process_reads_the_profile_the_first_measured(tmp_path):
    first = _run(tmp_path, "first")
    assert (tmp_path / "device_profiles.json").is_file()
    assert first["launch"] > 0 and first["gemm"] > 0
    assert _run(tmp_path, "second") == first
