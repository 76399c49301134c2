"""``python -m flowgraph ...``: the `flowgraph.cli` command line."""

from flowgraph.cli import main

raise SystemExit(main())
