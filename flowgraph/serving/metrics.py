"""Server metrics in Prometheus's text exposition format.

Three families, named as TensorFlow Serving names them: request counts by model, API
and HTTP status; request latency histograms by model and API (microseconds); and the
sizes of the batches run when batching is on. The format is written here (it is a few
lines of text) so the development server needs no extra package.

Example
-------
>>> m = Metrics(); m.observe_request("lin", "predict", 200, 0.002); m.observe_batch("lin", 4)
>>> 'status="200"' in m.render()
True
"""

from __future__ import annotations

import bisect
import threading
from collections import defaultdict

__all__ = ["CONTENT_TYPE", "Metrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_PREFIX = ":tensorflow:serving:"
LATENCY_BUCKETS_US = (100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000,
                      100_000, 250_000, 500_000, 1_000_000, 2_500_000, 10_000_000)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


class _Histogram:
    def __init__(self, bounds) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.total += value

    def lines(self, name: str, labels: str) -> list[str]:
        out, running = [], 0
        for bound, count in zip(self.bounds, self.counts, strict=False):
            running += count
            out.append(f'{name}_bucket{{{labels},le="{bound}"}} {running}')
        running += self.counts[-1]
        out.append(f'{name}_bucket{{{labels},le="+Inf"}} {running}')
        out.append(f"{name}_sum{{{labels}}} {self.total:g}")
        out.append(f"{name}_count{{{labels}}} {running}")
        return out


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class Metrics:
    """Thread-safe counters and histograms, rendered by `render`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: dict[tuple, int] = defaultdict(int)
        self._latency: dict[tuple, _Histogram] = {}
        self._batches: dict[str, _Histogram] = {}

    def observe_request(self, model: str, api: str, status: int, seconds: float) -> None:
        """Count one answered request and its latency."""
        with self._lock:
            self._requests[(model, api, str(int(status)))] += 1
            hist = self._latency.get((model, api))
            if hist is None:
                hist = self._latency[(model, api)] = _Histogram(LATENCY_BUCKETS_US)
            hist.observe(seconds * 1e6)

    def observe_batch(self, model: str, size: int) -> None:
        """Record one batch of `size` rows run as one ``Session.run``."""
        with self._lock:
            hist = self._batches.get(model)
            if hist is None:
                hist = self._batches[model] = _Histogram(BATCH_BUCKETS)
            hist.observe(size)

    def render(self) -> str:
        """The metrics in Prometheus's text format (version 0.0.4)."""
        count, latency, batch = (_PREFIX + "request_count", _PREFIX + "request_latency",
                                 _PREFIX + "batching_session:processed_batch_size")
        with self._lock:
            lines = [f"# HELP {count} Requests answered, by model, API and HTTP status.",
                     f"# TYPE {count} counter"]
            for (model, api, status), n in sorted(self._requests.items()):
                lines.append(f'{count}{{model_name="{_label(model)}",API="{api}",'
                             f'status="{status}"}} {n}')
            lines += [f"# HELP {latency} Request latency in microseconds, by model and API.",
                      f"# TYPE {latency} histogram"]
            for (model, api), hist in sorted(self._latency.items()):
                lines += hist.lines(latency, f'model_name="{_label(model)}",API="{api}"')
            lines += [f"# HELP {batch} Rows per batched Session.run, by model.",
                      f"# TYPE {batch} histogram"]
            for model, hist in sorted(self._batches.items()):
                lines += hist.lines(batch, f'model_name="{_label(model)}"')
        return "\n".join(lines) + "\n"
