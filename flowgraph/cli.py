"""The ``flowgraph`` command line.

``flowgraph serve --model_dir EXPORT_BASE [--port 8501] [--model_name NAME]
[--host 127.0.0.1] [--poll_interval 2]`` serves the newest SavedModel version under
EXPORT_BASE with TensorFlow Serving's REST API (see `flowgraph.serving.server`) until
interrupted. ``python -m flowgraph serve ...`` is the same.

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
import os
import sys

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flowgraph", description="flowgraph tools")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = sub.add_parser(
        "serve", help="serve a SavedModel over HTTP (TensorFlow Serving's REST API)",
        description="Serve the highest numbered version under --model_dir; new versions "
                    "exported there are picked up while serving.")
    serve.add_argument("--model_dir", required=True,
                       help="export base directory holding numbered version directories")
    serve.add_argument("--model_name", default="default",
                       help="model name in the URLs /v1/models/NAME (default: default)")
    serve.add_argument("--port", type=int, default=8501, help="port (default 8501; 0: any)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to bind (default 127.0.0.1, this machine only)")
    serve.add_argument("--poll_interval", type=float, default=2.0,
                       help="seconds between scans for new versions (default 2)")
    serve.add_argument("--verbose", action="store_true", help="log every request")
    ops = sub.add_parser(
        "ops", help="list the op types, or describe one",
        description="Without NAME, list every registered op type (cost class, backends "
                    "with a kernel). With NAME, show where the op is declared, its shape "
                    "function, gradient, kernels per backend and their dtypes, attributes "
                    "and cost class.")
    ops.add_argument("name", nargs="?", metavar="NAME", help="op type, e.g. MatMul")
    return parser


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
    parser = _parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "ops":
        return _ops_command(args.name)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.command == "serve":
        from flowgraph.ops import load_all
        from flowgraph.serving.server import ModelServer

        load_all()  # every op type, before any SavedModel names one

        if not os.path.isdir(args.model_dir):
            parser.error(f"--model_dir {args.model_dir} is not a directory")
        server = ModelServer(args.model_dir, model_name=args.model_name, host=args.host,
                             port=args.port, poll_interval=args.poll_interval)
        try:
            server.serve_forever()
        except OSError as e:
            print(f"flowgraph serve: cannot listen on {args.host}:{args.port}: {e}",
                  file=sys.stderr)
            return 1
        return 0
    parser.error(f"unknown command {args.command}")
    return 2
