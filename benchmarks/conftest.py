"""pytest-benchmark suites: run with ``python -m pytest benchmarks --benchmark-only``."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
