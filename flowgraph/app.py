"""`tf.app`: `run` (parse flags, call ``main``, exit with its result) and `flags`.

With absl-py installed (TensorFlow's case) `run` is absl's ``app.run`` with a parser that
leaves unknown flags to ``main``: ``--helpshort``/``--helpfull`` print the flags and exit,
``--flagfile=FILE`` reads flags from a file, and a flag that fails its validator (a
required flag left unset, ...) raises absl's ``IllegalFlagValueError`` naming it.

Example
-------
>>> import flowgraph as tf
>>> def main(argv):
...     print("arguments:", argv[1:])
>>> try:
...     tf.app.run(main, argv=["prog", "a.txt"])
... except SystemExit as e:
...     print("exit code", e.code)
arguments: ['a.txt']
exit code None
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from flowgraph import flags

__all__ = ["flags", "run"]


def run(main: Callable | None = None, argv: Sequence[str] | None = None):
    """Parse the command line into ``tf.app.flags.FLAGS``, then ``sys.exit(main(argv))``.

    `argv` defaults to ``sys.argv``; `main` to the ``main`` function of the ``__main__``
    module. Unknown ``--flags`` are not an error here: they stay in the argument list
    passed to `main` (program name first), as in TensorFlow 1.x.

    Raises
    ------
    SystemExit
        Always, with `main`'s return value as the exit code (so ``None`` is success).

    Example
    -------
    >>> import flowgraph as tf
    >>> try:
    ...     tf.app.run(lambda argv: 3, argv=["prog"])
    ... except SystemExit as e:
    ...     print(e.code)
    3
    """
    if main is None:
        main = getattr(sys.modules.get("__main__"), "main", None)
        if main is None:
            raise ValueError(
                "tf.app.run(): no `main` given and the __main__ module defines no function "
                "`main`. Pass it: tf.app.run(main=my_main).")
    try:
        from absl import app as absl_app
    except ImportError:  # pragma: no cover - absl-py is optional
        args = list(sys.argv if argv is None else argv) or [""]
        remaining = flags.FLAGS(args, known_only=True)
        sys.exit(main(remaining))

    def parse_known(args):
        return flags.FLAGS(sys.argv if args is None else args, known_only=True)

    # absl's runner, as TensorFlow's: --helpshort/--helpfull, --flagfile, exit codes
    absl_app.run(main, argv=None if argv is None else list(argv), flags_parser=parse_known)
