"""A program for the launcher tests: prints its TF_CONFIG role, then behaves per role.

``launch_task.py ok``: ps tasks serve (sleep) until stopped, the others exit 0.
``launch_task.py fail``: worker 0 exits with code 3 while the chief waits forever.
"""

import json
import os
import sys
import time

config = json.loads(os.environ["TF_CONFIG"])
role, index = config["task"]["type"], config["task"]["index"]
print(f"hello from {role} {index}; ps at {config['cluster'].get('ps')}", flush=True)
print(f"a line on stderr from {role}", file=sys.stderr, flush=True)
if role == "ps" or (sys.argv[1] == "fail" and role == "chief"):
    time.sleep(600)
if sys.argv[1] == "fail" and role == "worker":
    sys.exit(3)
