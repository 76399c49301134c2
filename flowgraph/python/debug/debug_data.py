"""Reading tfdbg dumps (``tensorflow.python.debug.lib.debug_data``): `DebugDumpDir`, its
`DebugTensorDatum` entries, and the `has_inf_or_nan` filter.

Example
-------
>>> import numpy as np
>>> has_inf_or_nan(None, np.array([1.0, np.nan]))
True
"""

from __future__ import annotations

import json
import os
import re

import numpy as np

from flowgraph.framework.event_messages import Event, GraphDef
from flowgraph.ops.tensor_compat import make_ndarray

__all__ = ["DebugDumpDir", "DebugTensorDatum", "WatchKeyDoesNotExistInDebugDumpDirError",
           "has_inf_or_nan"]

_DEVICE_PREFIX = "_tfdbg_device_"
_GRAPH_PREFIX = "_tfdbg_graph_"
_CORE_PREFIX = "_tfdbg_core_metadata_"


class WatchKeyDoesNotExistInDebugDumpDirError(ValueError):
    """A watch key (``node:slot:debug_op``) no dumped tensor has."""


def has_inf_or_nan(datum, tensor) -> bool:
    """tfdbg's filter: whether a dumped float tensor holds an infinity or a NaN."""
    if tensor is None or not isinstance(tensor, np.ndarray):
        return False
    if not (np.issubdtype(tensor.dtype, np.floating)
            or np.issubdtype(tensor.dtype, np.complexfloating)):
        return False
    return bool(np.any(np.isnan(tensor)) or np.any(np.isinf(tensor)))


def _device_name(dir_name: str) -> str:
    """``_tfdbg_device_,job_localhost,...,device_CPU_0`` ->
    ``/job:localhost/replica:0/task:0/device:CPU:0``."""
    parts = dir_name[len(_DEVICE_PREFIX):].split(",")[1:]
    return "/" + "/".join(p.replace("_", ":", 1) if not p.startswith("device_")
                          else "device:" + p[len("device_"):].replace("_", ":")
                          for p in parts)


class DebugTensorDatum:
    """One dumped tensor: which output of which op, by which debug op, when."""

    def __init__(self, dump_root: str, device_dir: str, rel_path: str) -> None:
        base = os.path.basename(rel_path)
        node_base, slot, debug_op, stamp = base.rsplit("_", 3)
        rel_dir = os.path.dirname(rel_path)
        self.node_name = f"{rel_dir}/{node_base}" if rel_dir else node_base
        self.output_slot = int(slot)
        self.debug_op = debug_op
        self.timestamp = int(stamp)
        self.device_name = _device_name(device_dir)
        self.file_path = os.path.join(dump_root, device_dir, rel_path)
        self.dump_size_bytes = os.path.getsize(self.file_path)

    @property
    def tensor_name(self) -> str:
        return f"{self.node_name}:{self.output_slot}"

    @property
    def watch_key(self) -> str:
        return f"{self.tensor_name}:{self.debug_op}"

    def get_tensor(self) -> np.ndarray:
        with open(self.file_path, "rb") as f:
            event = Event.FromString(f.read())
        return make_ndarray(event.summary.value[0].tensor)

    def __repr__(self) -> str:
        return f"{{DebugTensorDatum ({self.device_name}) {self.watch_key} @ {self.timestamp}}}"


class DebugDumpDir:
    """The dumps of one run (``session_root/run_<micros>_<n>``): tensors, graph and
    run information."""

    def __init__(self, dump_root, partition_graphs=None, validate=True) -> None:
        if not os.path.isdir(dump_root):
            raise OSError(f"Dump root directory {dump_root} does not exist")
        self._dump_root = dump_root
        self._data: list[DebugTensorDatum] = []
        self._nodes: dict[str, tuple[str, list[str]]] = {}
        self._meta: dict = {}
        for entry in sorted(os.listdir(dump_root)):
            path = os.path.join(dump_root, entry)
            if entry.startswith(_CORE_PREFIX):
                with open(path, "rb") as f:
                    self._meta = json.loads(Event.FromString(f.read()).log_message.message)
            elif entry.startswith(_DEVICE_PREFIX) and os.path.isdir(path):
                self._load_device(entry)
        self._data.sort(key=lambda d: d.timestamp)

    def _load_device(self, device_dir: str) -> None:
        top = os.path.join(self._dump_root, device_dir)
        for folder, _dirs, files in os.walk(top):
            for name in files:
                rel = os.path.relpath(os.path.join(folder, name), top)
                if name.startswith(_GRAPH_PREFIX):
                    with open(os.path.join(folder, name), "rb") as f:
                        for node in GraphDef.FromString(f.read()).node:
                            self._nodes[node.name] = (node.op, list(node.input))
                else:
                    self._data.append(DebugTensorDatum(self._dump_root, device_dir, rel))

    @property
    def dumped_tensor_data(self) -> list[DebugTensorDatum]:
        return self._data

    @property
    def size(self) -> int:
        return len(self._data)

    @property
    def t0(self) -> int | None:
        return self._data[0].timestamp if self._data else None

    @property
    def run_fetches_info(self):
        return self._meta.get("run_fetches_info")

    @property
    def run_feed_keys_info(self):
        return self._meta.get("run_feed_keys_info")

    @property
    def core_metadata(self) -> dict:
        return dict(self._meta)

    def devices(self) -> list[str]:
        return sorted({d.device_name for d in self._data})

    def nodes(self, device_name=None) -> list[str]:
        return list(self._nodes)

    def node_op_type(self, node_name, device_name=None) -> str:
        if node_name not in self._nodes:
            raise ValueError(f"None of the partition graphs contains node '{node_name}'.")
        return self._nodes[node_name][0]

    def node_inputs(self, node_name, is_control=False, device_name=None) -> list[str]:
        self.node_op_type(node_name)
        inputs = self._nodes[node_name][1]
        if is_control:
            return [i[1:] for i in inputs if i.startswith("^")]
        return [i for i in inputs if not i.startswith("^")]

    def watch_key_to_data(self, debug_watch_key, device_name=None) -> list[DebugTensorDatum]:
        return [d for d in self._data if d.watch_key == debug_watch_key]

    def get_tensor_file_paths(self, node_name, output_slot, debug_op,
                              device_name=None) -> list[str]:
        return [d.file_path for d in self._find_watch(node_name, output_slot, debug_op)]

    def get_tensors(self, node_name, output_slot, debug_op, device_name=None) -> list:
        return [d.get_tensor() for d in self._find_watch(node_name, output_slot, debug_op)]

    def get_dump_sizes_bytes(self, node_name, output_slot, debug_op,
                             device_name=None) -> list[int]:
        return [d.dump_size_bytes for d in self._find_watch(node_name, output_slot, debug_op)]

    def _find_watch(self, node_name, output_slot, debug_op) -> list[DebugTensorDatum]:
        found = self.watch_key_to_data(f"{node_name}:{output_slot}:{debug_op}")
        if not found:
            raise WatchKeyDoesNotExistInDebugDumpDirError(
                f"Watch key \"{node_name}:{output_slot}:{debug_op}\" does not exist in the "
                "debug dump of device None")
        return found

    def find(self, predicate, first_n=0, device_name=None, exclude_node_names=None):
        """The dumped tensors for which ``predicate(datum, tensor)`` holds, in time
        order (the first `first_n` when positive)."""
        out = []
        for d in self._data:
            if exclude_node_names and re.match(exclude_node_names, d.node_name):
                continue
            if predicate(d, d.get_tensor()):
                out.append(d)
                if first_n > 0 and len(out) >= first_n:
                    break
        return out
