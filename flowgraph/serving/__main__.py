"""``python -m flowgraph.serving ...``: the serve command line (`flowgraph.serving.cli`)."""

from flowgraph.serving.cli import main

raise SystemExit(main())
