"""`tf.app.flags` / `tf.flags`: TF1's command-line flags, without absl.

Flags are declared at module level with ``DEFINE_string``, ``DEFINE_integer``,
``DEFINE_float``, ``DEFINE_boolean`` (``DEFINE_bool``), ``DEFINE_list`` and
``DEFINE_enum`` and read as attributes of `FLAGS`. As in TensorFlow 1.x, reading a flag
before anything parsed the command line parses ``sys.argv`` then, and `tf.app.run`
parses it before calling ``main``.

The command line follows absl's syntax: ``--name=value`` or ``--name value``, a single
leading dash works too; booleans take ``--name``, ``--noname`` or
``--name=true|false|1|0|t|f|yes|no``; lists are comma-separated; ``--`` ends the flags.
``FLAGS(argv)`` parses `argv` (its first item is the program name) and returns the
program name plus the arguments that were not flags. An unknown flag is an error
(`UnrecognizedFlagError`), unless parsed with ``known_only=True`` (what `tf.app.run`
does), which leaves it in the returned arguments. ``--help`` prints the flags and exits.

Example
-------
>>> from flowgraph import flags_compat as flags
>>> fv = flags.FlagValues()
>>> flags.DEFINE_integer("batch_size", 32, "Examples per step.", flag_values=fv)
>>> flags.DEFINE_boolean("shuffle", True, "Shuffle the input.", flag_values=fv)
>>> fv(["train.py", "--batch_size=64", "--noshuffle", "data.csv"])
['train.py', 'data.csv']
>>> fv.batch_size, fv.shuffle
(64, False)
"""

from __future__ import annotations

import difflib
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "FLAGS",
    "DEFINE_bool",
    "DEFINE_boolean",
    "DEFINE_enum",
    "DEFINE_float",
    "DEFINE_integer",
    "DEFINE_list",
    "DEFINE_multi_integer",
    "DEFINE_multi_string",
    "DEFINE_string",
    "DuplicateFlagError",
    "Error",
    "Flag",
    "FlagValues",
    "IllegalFlagValueError",
    "UnparsedFlagAccessError",
    "UnrecognizedFlagError",
]


class Error(Exception):
    """Base class of flag errors."""


class DuplicateFlagError(Error):
    """A flag name is defined twice."""


class IllegalFlagValueError(Error, ValueError):
    """A flag value cannot be parsed or is not allowed."""


class UnrecognizedFlagError(Error):
    """The command line names a flag that was never defined."""


class UnparsedFlagAccessError(Error, AttributeError):
    """Kept for absl compatibility; flowgraph parses ``sys.argv`` on first access."""


_TRUE = {"true", "t", "1", "yes", "y"}
_FALSE = {"false", "f", "0", "no", "n"}


class Flag:
    """One flag: its name, help text, default, current value and value parser."""

    def __init__(self, name: str, default, help_text: str, parse: Callable[[Any], Any],
                 kind: str, boolean: bool = False, multi: bool = False) -> None:
        self.name = name
        self.help = help_text or ""
        self.parse = parse
        self.kind = kind
        self.boolean = boolean
        self.multi = multi
        self.present = 0
        self.default = None if default is None else self._convert(default, "default")
        self.value = self.default

    def _convert(self, raw, where: str):
        try:
            return self.parse(raw)
        except (TypeError, ValueError) as e:
            raise IllegalFlagValueError(
                f"flag --{self.name}: {where} value {raw!r} is not a valid {self.kind}: "
                f"{e}") from None

    def set_from_text(self, raw: str) -> None:
        value = self._convert(raw, "command-line")
        if self.multi:
            self.value = (self.value if self.present else []) + value
        else:
            self.value = value
        self.present += 1

    def __repr__(self) -> str:
        return f"Flag(--{self.name}={self.value!r})"


def _parse_bool(raw) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int) and raw in (0, 1):
        return bool(raw)
    if isinstance(raw, str):
        text = raw.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    raise ValueError("expected true/false, t/f, 1/0 or yes/no")


def _parse_int(raw) -> int:
    if isinstance(raw, bool):
        raise ValueError("a bool is not an integer")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    text = str(raw).strip()
    try:
        return int(text)
    except ValueError:
        return int(text, 0)


def _parse_float(raw) -> float:
    if isinstance(raw, bool):
        raise ValueError("a bool is not a float")
    return float(raw)


def _parse_str(raw) -> str:
    return raw if isinstance(raw, str) else str(raw)


def _parse_list(raw) -> list[str]:
    if isinstance(raw, list | tuple):
        return [str(x) for x in raw]
    text = str(raw).strip()
    return [s.strip() for s in text.split(",")] if text else []


class FlagValues:
    """The registry of defined flags; read flags as attributes (``FLAGS.learning_rate``).

    Reading an attribute before the command line was parsed parses ``sys.argv`` first.
    """

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_parsed", False)
        object.__setattr__(self, "_lock", threading.RLock())

    # -- definition --------------------------------------------------------------------
    def _define(self, flag: Flag) -> None:
        if not isinstance(flag.name, str) or not flag.name or flag.name.startswith("-"):
            raise Error(f"invalid flag name {flag.name!r}")
        with self._lock:
            if flag.name in self._flags:
                raise DuplicateFlagError(
                    f"The flag '{flag.name}' is defined twice. Define each flag once (at "
                    "module level), or delete it first with `del FLAGS.<name>`.")
            self._flags[flag.name] = flag

    # -- parsing -----------------------------------------------------------------------
    def __call__(self, argv: Sequence[str], known_only: bool = False) -> list[str]:
        """Parse `argv` (program name first); return the program name and non-flags."""
        if isinstance(argv, str) or not isinstance(argv, Sequence):
            raise TypeError(f"argv must be a list of strings, got {type(argv).__name__}")
        argv = list(argv)
        if not argv:
            raise ValueError("argv cannot be empty: its first item is the program name")
        with self._lock:
            rest = self._parse(argv[1:], known_only, argv[0])
            object.__setattr__(self, "_parsed", True)
        return [argv[0], *rest]

    def _parse(self, args: list[str], known_only: bool, program: str) -> list[str]:
        rest: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            i += 1
            if arg == "--":
                rest.extend(args[i:])
                break
            if not arg.startswith("-") or arg == "-":
                rest.append(arg)
                continue
            body = arg[2:] if arg.startswith("--") else arg[1:]
            name, has_value, value = body.partition("=")
            if name in ("help", "helpfull", "h", "?") and name not in self._flags:
                sys.stdout.write(self.help_text(program) + "\n")
                raise SystemExit(0)
            flag = self._flags.get(name)
            if flag is None and name.startswith("no"):
                candidate = self._flags.get(name[2:])
                if candidate is not None and candidate.boolean:
                    if has_value:
                        raise IllegalFlagValueError(f"{arg} does not take an argument")
                    candidate.set_from_text("false")
                    continue
            if flag is None:
                if known_only:
                    rest.append(arg)
                    continue
                close = difflib.get_close_matches(name, list(self._flags), n=1)
                hint = f" Did you mean --{close[0]}?" if close else ""
                raise UnrecognizedFlagError(
                    f"Unknown command line flag '{name}' in {arg!r}.{hint} Defined flags: "
                    f"{', '.join(sorted(self._flags)) or '(none)'}. Parse with "
                    "FLAGS(argv, known_only=True) to pass unknown arguments through.")
            if not has_value:
                if flag.boolean:
                    value = "true"
                elif i < len(args):
                    value = args[i]
                    i += 1
                else:
                    raise IllegalFlagValueError(f"flag --{name} needs a value")
            flag.set_from_text(value)
        return rest

    def is_parsed(self) -> bool:
        return self._parsed

    def mark_as_parsed(self) -> None:
        object.__setattr__(self, "_parsed", True)

    def unparse_flags(self) -> None:
        """Reset every flag to its default and mark the command line as not parsed."""
        with self._lock:
            for flag in self._flags.values():
                flag.value, flag.present = flag.default, 0
            object.__setattr__(self, "_parsed", False)

    def _ensure_parsed(self) -> None:
        if not self._parsed:
            with self._lock:
                if not self._parsed:
                    self(sys.argv or [""])

    # -- access ------------------------------------------------------------------------
    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        flags = object.__getattribute__(self, "_flags")
        if name not in flags:
            raise AttributeError(
                f"No flag named '{name}' is defined (see FLAGS.flag_values_dict()).")
        self._ensure_parsed()
        return flags[name].value

    def __setattr__(self, name: str, value) -> None:
        flag = self._flags.get(name)
        if flag is None:
            raise AttributeError(
                f"Cannot set unknown flag '{name}'; define it first with DEFINE_*.")
        flag.value = None if value is None else flag._convert(value, "assigned")
        flag.present += 1

    def __delattr__(self, name: str) -> None:
        if name not in self._flags:
            raise AttributeError(f"No flag named '{name}' is defined.")
        del self._flags[name]

    def __getitem__(self, name: str) -> Flag:
        return self._flags[name]

    def __contains__(self, name: str) -> bool:
        return name in self._flags

    def __iter__(self):
        return iter(list(self._flags))

    def __len__(self) -> int:
        return len(self._flags)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._flags))

    def set_default(self, name: str, value) -> None:
        """Change the default of flag `name` (and its value, unless given on the command line)."""
        flag = self._flags[name]
        flag.default = flag._convert(value, "default")
        if not flag.present:
            flag.value = flag.default

    def flag_values_dict(self) -> dict[str, Any]:
        """``{name: value}`` of all flags (parsing ``sys.argv`` first if needed)."""
        self._ensure_parsed()
        return {name: flag.value for name, flag in self._flags.items()}

    def help_text(self, program: str = "") -> str:
        lines = [f"usage: {program} [flags]", "", "flags:"]
        for name in sorted(self._flags):
            flag = self._flags[name]
            lines.append(f"  --{name}: {flag.help}")
            lines.append(f"    (default: {flag.default!r}; {flag.kind})")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<FlagValues {len(self._flags)} flags, parsed={self._parsed}>"


FLAGS = FlagValues()


def DEFINE_string(name: str, default, help: str, flag_values: FlagValues = FLAGS,
                  **kwargs) -> None:
    """Define a string flag.

    Example
    -------
    >>> from flowgraph import flags_compat as flags
    >>> fv = flags.FlagValues()
    >>> flags.DEFINE_string("data_dir", "/tmp/data", "Where the data is.", flag_values=fv)
    >>> fv(["prog", "--data_dir", "/data"]) and fv.data_dir
    '/data'
    """
    flag_values._define(Flag(name, default, help, _parse_str, "string"))


def DEFINE_integer(name: str, default, help: str, lower_bound: int | None = None,
                   upper_bound: int | None = None, flag_values: FlagValues = FLAGS,
                   **kwargs) -> None:
    """Define an integer flag, optionally bounded.

    Example
    -------
    >>> from flowgraph import flags_compat as flags
    >>> fv = flags.FlagValues()
    >>> flags.DEFINE_integer("steps", 100, "Training steps.", lower_bound=1, flag_values=fv)
    >>> fv(["prog", "--steps=5"]) and fv.steps
    5
    """
    flag_values._define(Flag(name, default, help, _bounded(_parse_int, lower_bound,
                                                           upper_bound), "integer"))


def DEFINE_float(name: str, default, help: str, lower_bound: float | None = None,
                 upper_bound: float | None = None, flag_values: FlagValues = FLAGS,
                 **kwargs) -> None:
    """Define a float flag, optionally bounded.

    Example
    -------
    >>> from flowgraph import flags_compat as flags
    >>> fv = flags.FlagValues()
    >>> flags.DEFINE_float("learning_rate", 0.01, "Step size.", flag_values=fv)
    >>> fv(["prog", "--learning_rate=0.5"]) and fv.learning_rate
    0.5
    """
    flag_values._define(Flag(name, default, help, _bounded(_parse_float, lower_bound,
                                                           upper_bound), "float"))


def DEFINE_boolean(name: str, default, help: str, flag_values: FlagValues = FLAGS,
                   **kwargs) -> None:
    """Define a boolean flag (``--name``, ``--noname``, ``--name=false``).

    Example
    -------
    >>> from flowgraph import flags_compat as flags
    >>> fv = flags.FlagValues()
    >>> flags.DEFINE_boolean("verbose", False, "Log more.", flag_values=fv)
    >>> fv(["prog", "--verbose"]) and fv.verbose
    True
    """
    flag_values._define(Flag(name, default, help, _parse_bool, "boolean", boolean=True))


DEFINE_bool = DEFINE_boolean


def DEFINE_list(name: str, default, help: str, flag_values: FlagValues = FLAGS,
                **kwargs) -> None:
    """Define a comma-separated list-of-strings flag.

    Example
    -------
    >>> from flowgraph import flags_compat as flags
    >>> fv = flags.FlagValues()
    >>> flags.DEFINE_list("hidden", "64,32", "Layer sizes.", flag_values=fv)
    >>> fv(["prog"]) and fv.hidden
    ['64', '32']
    """
    flag_values._define(Flag(name, default, help, _parse_list, "comma-separated list"))


def DEFINE_enum(name: str, default, enum_values: Sequence[str], help: str,
                flag_values: FlagValues = FLAGS, case_sensitive: bool = True,
                **kwargs) -> None:
    """Define a string flag restricted to `enum_values`.

    Example
    -------
    >>> from flowgraph import flags_compat as flags
    >>> fv = flags.FlagValues()
    >>> flags.DEFINE_enum("mode", "train", ["train", "eval"], "What to do.", flag_values=fv)
    >>> fv(["prog", "--mode=eval"]) and fv.mode
    'eval'
    """
    allowed = [str(v) for v in enum_values]
    if not allowed:
        raise ValueError(f"DEFINE_enum('{name}'): enum_values must not be empty")

    def parse(raw) -> str:
        text = str(raw)
        for v in allowed:
            if text == v or (not case_sensitive and text.lower() == v.lower()):
                return v
        raise ValueError(f"must be one of {allowed}")

    flag_values._define(Flag(name, default, help, parse, f"one of {allowed}"))


def DEFINE_multi_string(name: str, default, help: str, flag_values: FlagValues = FLAGS,
                        **kwargs) -> None:
    """Define a string flag that may be repeated; its value is the list of all values.

    Example
    -------
    >>> from flowgraph import flags_compat as flags
    >>> fv = flags.FlagValues()
    >>> flags.DEFINE_multi_string("file", [], "Input files.", flag_values=fv)
    >>> fv(["prog", "--file=a", "--file=b"]) and fv.file
    ['a', 'b']
    """
    flag_values._define(Flag(name, default, help, _multi(_parse_str), "repeatable string",
                             multi=True))


def DEFINE_multi_integer(name: str, default, help: str, flag_values: FlagValues = FLAGS,
                         **kwargs) -> None:
    """Define an integer flag that may be repeated; its value is the list of all values.

    Example
    -------
    >>> from flowgraph import flags_compat as flags
    >>> fv = flags.FlagValues()
    >>> flags.DEFINE_multi_integer("seed", [0], "Seeds.", flag_values=fv)
    >>> fv(["prog", "--seed=1", "--seed=2"]) and fv.seed
    [1, 2]
    """
    flag_values._define(Flag(name, default, help, _multi(_parse_int), "repeatable integer",
                             multi=True))


def _bounded(parse: Callable, lower, upper) -> Callable:
    def check(raw):
        value = parse(raw)
        if lower is not None and value < lower:
            raise ValueError(f"must be >= {lower}")
        if upper is not None and value > upper:
            raise ValueError(f"must be <= {upper}")
        return value

    return check


def _multi(parse: Callable) -> Callable:
    def many(raw):
        items = raw if isinstance(raw, list | tuple) else [raw]
        return [parse(x) for x in items]

    return many
