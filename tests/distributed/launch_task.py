"""A program for the launcher tests: prints its TF_CONFIG role, then behaves per role.

``launch_task.py ok``: ps tasks listen on their address until stopped; the others wait
until the ps accepts a connection (so its output is in, however slowly it started),
then exit 0.
``launch_task.py fail``: worker 0 exits with code 3 while the chief waits forever.
"""

import json
import os
import socket
import sys
import time

config = json.loads(os.environ["TF_CONFIG"])
role, index = config["task"]["type"], config["task"]["index"]
print(f"hello from {role} {index}; ps at {config['cluster'].get('ps')}", flush=True)
print(f"a line on stderr from {role}", file=sys.stderr, flush=True)
ps = config["cluster"].get("ps") or []
if role == "ps":
    host, port = ps[index].rsplit(":", 1)
    server = socket.create_server((host, int(port)))
    time.sleep(600)
if sys.argv[1] == "ok" and ps:
    host, port = ps[0].rsplit(":", 1)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
if sys.argv[1] == "fail" and role == "chief":
    time.sleep(600)
if sys.argv[1] == "fail" and role == "worker":
    sys.exit(3)
