"""The ``flowgraph`` command line.

``flowgraph serve --rest_api_port 8501 --model_name NAME --model_base_path EXPORT_BASE``
(TensorFlow Serving's flags; see `flowgraph.serving.cli` for all of them and the older
aliases ``--port``/``--model_dir``/``--poll_interval``) serves the newest SavedModel
version under EXPORT_BASE with TensorFlow Serving's REST API until interrupted.
``python -m flowgraph serve ...`` is the same.

``flowgraph saved_model_cli show|run`` and ``flowgraph inspect_checkpoint`` are
TensorFlow's tools of those names (`flowgraph.saved_model.saved_model_cli`,
`flowgraph.train.inspect_checkpoint`); ``flowgraph --version`` prints the version.

``flowgraph launch [--ray] --ps 1 --workers 2 -- python train.py`` starts a TF_CONFIG
cluster of one program, on this machine (`flowgraph.distributed.launch`) or as Ray
actors (`flowgraph.distributed.ray`).

``flowgraph ops [NAME]`` describes op type NAME (where it is declared, its shape
function, gradient, kernels per backend with their dtypes, attributes and cost class;
see `flowgraph.backends.op_info`), or lists every op type without NAME. An unknown NAME
exits with code 2 and names the close matches.

Example
-------
>>> main(["serve", "--help"])            # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import logging
import sys

from flowgraph.logging_compat import use_root_handlers

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    from flowgraph.framework.versions import __version__

    parser = argparse.ArgumentParser(prog="flowgraph", description="flowgraph tools")
    parser.add_argument("--version", action="version", version=f"flowgraph {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = sub.add_parser(
        "serve", help="serve SavedModels over HTTP (TensorFlow Serving's REST API)",
        description="Serve the highest numbered version under --model_base_path (or each "
                    "model of --model_config_file); new versions exported there are picked "
                    "up while serving.")
    from flowgraph.serving.cli import add_arguments

    add_arguments(serve)
    ops = sub.add_parser(
        "ops", help="list the op types, or describe one",
        description="Without NAME, list every registered op type (cost class, backends "
                    "with a kernel). With NAME, show where the op is declared, its shape "
                    "function, gradient, kernels per backend and their dtypes, attributes "
                    "and cost class.")
    ops.add_argument("name", nargs="?", metavar="NAME", help="op type, e.g. MatMul")
    from flowgraph.saved_model.saved_model_cli import add_parser as add_saved_model_cli
    from flowgraph.train.inspect_checkpoint import add_parser as add_inspect_checkpoint

    add_saved_model_cli(sub)
    add_inspect_checkpoint(sub)
    return parser


def _tool_command(args) -> int:
    """saved_model_cli / inspect_checkpoint: a failure is one line on stderr, exit 1."""
    from flowgraph.framework.errors import OpError

    try:
        return args.run_command(args)
    except (OpError, ValueError, OSError, RuntimeError) as e:
        print(f"flowgraph {args.command}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


def _ops_command(name: str | None) -> int:
    from flowgraph.backends.op_info import UnknownOpError, describe_op, list_ops

    if name is None:
        print(list_ops())
        return 0
    try:
        print(describe_op(name))
    except UnknownOpError as e:
        print(f"flowgraph ops: {e}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line with `argv` (default ``sys.argv[1:]``); returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["launch"]:  # flowgraph.distributed.launch: its own parser
        options = argv[1:argv.index("--")] if "--" in argv else argv[1:]
        if "--ray" in options:  # the same arguments, run by flowgraph.distributed.ray
            from flowgraph.distributed.ray import main as launch
        else:
            from flowgraph.distributed.launch import main as launch

        return launch(argv[1:])
    parser = _parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "ops":
        return _ops_command(args.name)
    if args.command in ("saved_model_cli", "inspect_checkpoint"):
        return _tool_command(args)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    use_root_handlers()  # records print once, in this format
    if args.command == "serve":
        from flowgraph.serving.cli import run

        return run(args, parser)
    parser.error(f"unknown command {args.command}")
    return 2
