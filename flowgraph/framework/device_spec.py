"""Device names: ``/job:worker/replica:0/task:1/device:CPU:0`` parsed, merged, printed.

Example
-------
>>> DeviceSpec.from_string("/cpu:1").to_string()
'/device:CPU:1'
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class DeviceSpec:
    """A possibly partial device name; unset fields are None."""

    job: str | None = None
    replica: int | None = None
    task: int | None = None
    device_type: str | None = None
    device_index: int | None = None

    @classmethod
    def from_string(cls, spec: str | None) -> DeviceSpec:
        if not spec:
            return cls()
        fields: dict = {}
        for part in spec.split("/"):
            if not part:
                continue
            pieces = part.split(":")
            key = pieces[0].lower()
            try:
                if key == "job" and len(pieces) == 2:
                    fields["job"] = pieces[1]
                elif key == "replica" and len(pieces) == 2:
                    fields["replica"] = int(pieces[1])
                elif key == "task" and len(pieces) == 2:
                    fields["task"] = int(pieces[1])
                elif key == "device" and len(pieces) in (2, 3):
                    fields["device_type"] = pieces[1].upper()
                    if len(pieces) == 3 and pieces[2] != "*":
                        fields["device_index"] = int(pieces[2])
                elif (len(pieces) in (1, 2) and key in ("cpu", "gpu", "opencl")) or (
                    len(pieces) == 2 and pieces[0].isalpha()
                ):
                    fields["device_type"] = pieces[0].upper()
                    if len(pieces) == 2 and pieces[1] != "*":
                        fields["device_index"] = int(pieces[1])
                else:
                    raise ValueError(part)
            except ValueError:
                raise ValueError(
                    f"Invalid device specification '{spec}': could not parse '{part}'. "
                    "Expected something like '/job:worker/task:0/device:CPU:1' or '/cpu:0'."
                ) from None
        return cls(**fields)

    def to_string(self) -> str:
        out = ""
        if self.job is not None:
            out += f"/job:{self.job}"
        if self.replica is not None:
            out += f"/replica:{self.replica}"
        if self.task is not None:
            out += f"/task:{self.task}"
        if self.device_type is not None:
            index = "*" if self.device_index is None else self.device_index
            out += f"/device:{self.device_type}:{index}"
        return out

    def merge_from(self, other: DeviceSpec) -> DeviceSpec:
        """Fields set in `other` override ours."""
        values = {k: v for k, v in other.__dict__.items() if v is not None}
        if "device_type" in values and "device_index" not in values:
            if values["device_type"] != self.device_type:
                values["device_index"] = None
        return replace(self, **values)

    def is_compatible_with(self, full: DeviceSpec) -> bool:
        """True if every field we set matches `full`."""
        for key, value in self.__dict__.items():
            if value is not None and getattr(full, key) != value:
                return False
        return True

    def __str__(self) -> str:
        return self.to_string()


def canonical_device(spec: str | None) -> str:
    """Normalize a device string (``'/cpu:0'`` -> ``'/device:CPU:0'``)."""
    return DeviceSpec.from_string(spec).to_string()


def merge_device(outer: str, inner: str) -> str:
    return DeviceSpec.from_string(outer).merge_from(DeviceSpec.from_string(inner)).to_string()
