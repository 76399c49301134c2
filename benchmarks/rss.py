"""Resident-memory readings for the memory benchmarks (Linux ``/proc``).

>>> status_kb("NoSuchField") is None
True
"""

from __future__ import annotations


def status_kb(field: str) -> int | None:
    """A ``/proc/self/status`` field in kB (``VmRSS``, ``VmHWM``), or None."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0); False if that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False
