"""Device names: ``/job:worker/replica:0/task:1/device:CPU:0`` parsed, merged, printed.

A device string names up to five fields; any of them may be missing (a *partial*
name). ``tf.device`` scopes merge field by field, the innermost scope winning, so
``/job:ps`` around ``/gpu:1`` gives ``/job:ps/device:GPU:1``. String work happens on
every op creation, so the string-level helpers (`canonical_device`, `merge_device`)
are cached.

Example
-------
>>> DeviceSpec.from_string("/cpu:1").to_string()
'/device:CPU:1'
>>> merge_device("/job:ps/device:CPU:0", "/gpu:1")
'/job:ps/device:GPU:1'
"""

from __future__ import annotations

import functools

_FIELDS = ("job", "replica", "task", "device_type", "device_index")


def _parse_error(spec: str, what: str) -> ValueError:
    return ValueError(
        f"Invalid device specification '{spec}': {what}. Expected a string like "
        "'/job:worker/replica:0/task:1/device:CPU:0', '/cpu:0' or '/gpu:1'."
    )


def _int_field(spec: str, key: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise _parse_error(spec, f"'{key}' needs an integer, got '{text}'") from None


@functools.lru_cache(maxsize=4096)
def _parse(spec: str) -> tuple:
    """``spec`` -> (job, replica, task, device_type, device_index); None for missing."""
    job = replica = task = device_type = device_index = None
    for part in spec.split("/"):
        if not part:
            continue
        pieces = part.split(":")
        key = pieces[0].lower()
        n = len(pieces)
        if key == "job" and n == 2:
            job = pieces[1]
        elif key == "replica" and n == 2:
            replica = _int_field(spec, "replica", pieces[1])
        elif key == "task" and n == 2:
            task = _int_field(spec, "task", pieces[1])
        elif key == "device" and n == 3:
            if device_type is not None:
                raise _parse_error(spec, "it names more than one device type")
            device_type = pieces[1].upper()
            if pieces[2] != "*":
                device_index = _int_field(spec, "device index", pieces[2])
        elif key in ("cpu", "gpu") and n in (1, 2):
            if device_type is not None:
                raise _parse_error(spec, "it names more than one device type")
            device_type = key.upper()
            if n == 2 and pieces[1] != "*":
                device_index = _int_field(spec, "device index", pieces[1])
        else:
            raise _parse_error(spec, f"unknown attribute '{pieces[0]}' in '{part}'")
    return (job, replica, task, device_type, device_index)


def _format(fields: tuple) -> str:
    job, replica, task, device_type, device_index = fields
    out = ""
    if job is not None:
        out += f"/job:{job}"
    if replica is not None:
        out += f"/replica:{replica}"
    if task is not None:
        out += f"/task:{task}"
    if device_type is not None:
        out += f"/device:{device_type}:{'*' if device_index is None else device_index}"
    return out


class DeviceSpec:
    """A possibly partial device name; unset fields are None (TensorFlow 1.x `DeviceSpec`).

    The object is mutable like TF1's: `merge_from` updates it in place, while
    `make_merged_spec` returns a new spec.

    Example
    -------
    >>> spec = DeviceSpec(job="ps", task=1)
    >>> spec.merge_from(DeviceSpec.from_string("/gpu:0"))
    >>> spec.to_string()
    '/job:ps/task:1/device:GPU:0'
    """

    __slots__ = _FIELDS

    def __init__(self, job: str | None = None, replica: int | None = None,
                 task: int | None = None, device_type: str | None = None,
                 device_index: int | None = None) -> None:
        self.job = job
        self.replica = None if replica is None else int(replica)
        self.task = None if task is None else int(task)
        self.device_type = None if device_type is None else str(device_type).upper()
        self.device_index = None if device_index is None else int(device_index)

    @classmethod
    def _from_fields(cls, fields: tuple) -> DeviceSpec:
        spec = cls.__new__(cls)
        (spec.job, spec.replica, spec.task, spec.device_type, spec.device_index) = fields
        return spec

    def _fields(self) -> tuple:
        return (self.job, self.replica, self.task, self.device_type, self.device_index)

    @classmethod
    def from_string(cls, spec: str | None) -> DeviceSpec:
        """Parse ``spec`` (ValueError naming the bad part if it is malformed)."""
        if isinstance(spec, DeviceSpec):
            return cls._from_fields(spec._fields())
        if not spec:
            return cls()
        if not isinstance(spec, str):
            raise TypeError(f"A device specification must be a string, got {spec!r}")
        return cls._from_fields(_parse(spec))

    def parse_from_string(self, spec: str) -> DeviceSpec:
        """Replace every field by those parsed from `spec`; returns self."""
        (self.job, self.replica, self.task, self.device_type,
         self.device_index) = _parse(spec) if spec else (None,) * 5
        return self

    def to_string(self) -> str:
        return _format(self._fields())

    def merge_from(self, dev: DeviceSpec) -> None:
        """Overwrite our fields with those set in `dev` (in place, as in TF1)."""
        for key in _FIELDS:
            value = getattr(dev, key)
            if value is not None:
                setattr(self, key, value)

    def make_merged_spec(self, dev: DeviceSpec) -> DeviceSpec:
        """A new spec: ours with the fields set in `dev` overriding."""
        out = DeviceSpec._from_fields(self._fields())
        out.merge_from(dev)
        return out

    def replace(self, **kwargs) -> DeviceSpec:
        """A copy with the given fields replaced."""
        unknown = set(kwargs) - set(_FIELDS)
        if unknown:
            raise TypeError(f"DeviceSpec has no fields {sorted(unknown)}")
        out = DeviceSpec._from_fields(self._fields())
        for key, value in kwargs.items():
            setattr(out, key, value)
        return out

    def is_compatible_with(self, full: DeviceSpec) -> bool:
        """True if every field we set matches `full`."""
        return all(
            mine is None or mine == theirs
            for mine, theirs in zip(self._fields(), full._fields())
        )

    def __eq__(self, other) -> bool:
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self) -> int:
        return hash(self.to_string())

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={getattr(self, k)}" for k in _FIELDS)
        return f"<DeviceSpec({inner})>"


@functools.lru_cache(maxsize=4096)
def canonical_device(spec: str | None) -> str:
    """Normalize a device string (``'/cpu:0'`` -> ``'/device:CPU:0'``)."""
    return _format(_parse(spec)) if spec else ""


@functools.lru_cache(maxsize=4096)
def merge_device(outer: str, inner: str) -> str:
    """`inner`'s fields where set, else `outer`'s (the rule of nested ``tf.device``)."""
    if not outer:
        return canonical_device(inner)
    if not inner:
        return canonical_device(outer)
    merged = tuple(
        i if i is not None else o for o, i in zip(_parse(outer), _parse(inner))
    )
    return _format(merged)


def device_string(value) -> str:
    """A canonical device string from a string, a `DeviceSpec`, or None."""
    if value is None:
        return ""
    if isinstance(value, DeviceSpec):
        return value.to_string()
    to_string = getattr(value, "to_string", None)
    if to_string is not None and not isinstance(value, str):
        return canonical_device(to_string())
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if not isinstance(value, str):
        raise TypeError(
            f"A device must be a string, a DeviceSpec or None; got {type(value).__name__}: "
            f"{value!r}"
        )
    return canonical_device(value)
