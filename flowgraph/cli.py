"""The ``flowgraph`` command line.

``flowgraph serve --model_dir EXPORT_BASE [--port 8501] [--model_name NAME]
[--host 127.0.0.1] [--poll_interval 2]`` serves the newest SavedModel version under
EXPORT_BASE with TensorFlow Serving's REST API (see `flowgraph.serving.server`) until
interrupted. ``python -m flowgraph serve ...`` is the same.

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
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line with `argv` (default ``sys.argv[1:]``); returns the exit code."""
    parser = _parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.command is None:
        parser.print_help()
        return 2
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.command == "serve":
        from flowgraph.serving.server import ModelServer

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
