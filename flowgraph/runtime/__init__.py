"""Sessions, run-plan compilation, placement and the Cython executor."""
