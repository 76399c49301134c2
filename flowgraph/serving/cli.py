"""The ``serve`` command line, with TensorFlow Serving's flag names.

``python -m flowgraph.serving --rest_api_port 8501 --model_name m --model_base_path
/models/m`` (and ``flowgraph serve ...`` once `flowgraph.cli` delegates here) serves until
interrupted. flowgraph's earlier names stay as aliases: ``--port`` for
``--rest_api_port``, ``--model_dir`` for ``--model_base_path``, ``--poll_interval`` for
``--file_system_poll_wait_seconds``.

Example
-------
>>> parser = argparse.ArgumentParser(); add_arguments(parser)
>>> args = parser.parse_args(["--model_dir", "/m", "--port", "0", "--enable_batching"])
>>> args.model_base_path, args.rest_api_port, batching_parameters(args).max_batch_size
('/m', 0, 32)
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading

from flowgraph.logging_compat import use_root_handlers

__all__ = ["add_arguments", "batching_parameters", "limits", "main", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the serve flags to `parser`."""
    from flowgraph.serving.batching import BatchingParameters
    from flowgraph.serving.wsgi import Limits

    model = parser.add_argument_group("models")
    model.add_argument("--model_base_path", "--model_dir", dest="model_base_path",
                       help="export base directory holding numbered version directories")
    model.add_argument("--model_name", default="default",
                       help="model name in the URLs /v1/models/NAME (default: default)")
    model.add_argument("--model_config_file",
                       help="several models: TensorFlow Serving's model_config_list text "
                            "format (name, base_path, model_platform) or the same as JSON")
    model.add_argument("--file_system_poll_wait_seconds", "--poll_interval",
                       dest="poll_interval", type=float, default=2.0,
                       help="seconds between scans for new versions (default 2)")
    net = parser.add_argument_group("HTTP")
    net.add_argument("--rest_api_port", "--port", dest="rest_api_port", type=int,
                     default=8501, help="port (default 8501; 0: any free port)")
    net.add_argument("--host", default="127.0.0.1",
                     help="address to bind (default 127.0.0.1, this machine only)")
    net.add_argument("--server", choices=("waitress", "dev"), default="waitress",
                     help="HTTP server: waitress (default, production) or dev (the standard "
                          "library's, for development only)")
    d = Limits()
    net.add_argument("--max_body_bytes", type=int, default=d.max_body_bytes,
                     help=f"largest request body (default {d.max_body_bytes})")
    net.add_argument("--max_instances_per_request", type=int,
                     default=d.max_instances_per_request,
                     help=f"most rows per request (default {d.max_instances_per_request})")
    net.add_argument("--max_concurrent_requests", "--rest_api_num_threads",
                     dest="max_concurrent_requests", type=int,
                     default=d.max_concurrent_requests,
                     help="inference requests served at once; more get 503 (default "
                          f"{d.max_concurrent_requests})")
    net.add_argument("--connection_limit", type=int, default=d.connection_limit,
                     help=f"open connections at most (default {d.connection_limit})")
    net.add_argument("--request_timeout", type=float, default=d.request_timeout,
                     help="seconds to receive one whole request (default "
                          f"{d.request_timeout:g})")
    net.add_argument("--rest_api_timeout_in_ms", type=int, default=None,
                     help="TensorFlow Serving's name for --request_timeout, in ms")
    net.add_argument("--idle_timeout", type=float, default=d.idle_timeout,
                     help=f"seconds an idle connection stays open (default "
                          f"{d.idle_timeout:g})")
    batch = parser.add_argument_group("batching")
    batch.add_argument("--enable_batching", action="store_true",
                       help="batch concurrent requests to a model into one Session.run")
    batch.add_argument("--batching_parameters_file",
                       help="TensorFlow Serving's batching parameters (protobuf text, e.g. "
                            "'max_batch_size { value: 32 }'); implies --enable_batching")
    b = BatchingParameters()
    for name in ("max_batch_size", "batch_timeout_micros", "num_batch_threads",
                 "max_enqueued_batches"):
        batch.add_argument(f"--{name}", type=int, default=None,
                           help=f"(default {getattr(b, name)}; overrides the file)")
    parser.add_argument("--verbose", action="store_true", help="log every request")


def limits(args):
    """The `Limits` the parsed `args` ask for."""
    from flowgraph.serving.wsgi import Limits

    timeout = args.request_timeout
    if args.rest_api_timeout_in_ms is not None:
        timeout = args.rest_api_timeout_in_ms / 1000
    return Limits(max_body_bytes=args.max_body_bytes,
                  max_instances_per_request=args.max_instances_per_request,
                  max_concurrent_requests=args.max_concurrent_requests,
                  connection_limit=args.connection_limit, request_timeout=timeout,
                  idle_timeout=args.idle_timeout)


def batching_parameters(args):
    """The `BatchingParameters` the parsed `args` ask for, or None without batching."""
    import dataclasses

    from flowgraph.serving.batching import BatchingParameters

    if not (args.enable_batching or args.batching_parameters_file):
        return None
    params = BatchingParameters()
    if args.batching_parameters_file:
        with open(args.batching_parameters_file, encoding="utf-8") as f:
            params = BatchingParameters.from_text(f.read(), args.batching_parameters_file)
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(params)
             if getattr(args, f.name) is not None}
    return dataclasses.replace(params, **given)


def run(args, parser: argparse.ArgumentParser) -> int:
    """Serve as the parsed `args` say until interrupted; returns the exit code."""
    from flowgraph.ops import load_all
    from flowgraph.serving.models import read_model_config
    from flowgraph.serving.server import ModelServer

    if (args.model_base_path is None) == (args.model_config_file is None):
        parser.error("give exactly one of --model_base_path (--model_dir) or "
                     "--model_config_file")
    try:
        if args.model_config_file:
            models = read_model_config(args.model_config_file)
        else:
            models = [(args.model_name, args.model_base_path)]
        server_limits, batching = limits(args), batching_parameters(args)
    except (OSError, ValueError) as e:
        parser.error(str(e))
    for name, path in models:
        if not os.path.isdir(path):
            parser.error(f"the base path of model '{name}', {path}, is not a directory")
    load_all()  # every op type, before any SavedModel names one
    server = ModelServer(models=models, host=args.host, port=args.rest_api_port,
                         poll_interval=args.poll_interval, server=args.server,
                         limits=server_limits, batching=batching)
    _stop_on_sigterm()
    try:
        server.serve_forever()
    except ImportError as e:
        print(f"flowgraph serve: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"flowgraph serve: cannot listen on {args.host}:{args.rest_api_port}: {e}",
              file=sys.stderr)
        return 1
    return 0


def _stop_on_sigterm() -> None:
    """Let SIGTERM (``docker stop``, ``kill``) stop the server as Ctrl-C does."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, interrupt)


def main(argv: list[str] | None = None) -> int:
    """``python -m flowgraph.serving [flags]``; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="flowgraph serve", description="Serve SavedModels with TensorFlow Serving's "
        "REST API; new versions exported under a base path are picked up while serving.")
    add_arguments(parser)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    use_root_handlers()  # records print once, in this format
    return run(args, parser)
