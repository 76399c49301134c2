"""Data helpers of `tf.keras.utils`: `Sequence` (an indexable source of batches that
`fit` / `evaluate` / `predict` accept), the enqueuers that read a `Sequence` or a
generator on worker threads (`OrderedEnqueuer`, `GeneratorEnqueuer`), `pad_sequences`,
`to_ordinal`, `Progbar`, `get_source_inputs` and the interactive-logging switches.

The enqueuers run their workers on threads; ``use_multiprocessing=True`` is accepted
and also uses threads (results and their order are the same).

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> tf.keras.utils.pad_sequences([[1, 2, 3], [4]], maxlen=2).tolist()
[[2, 3], [0, 4]]
>>> tf.keras.utils.to_ordinal([0, 2], 3).tolist()
[[0.0, 0.0], [1.0, 1.0]]
"""

from __future__ import annotations

import logging
import queue
import random
import sys
import threading
import time

import numpy as np

from flowgraph.keras.utils import _flat_class_ids

__all__ = ["GeneratorEnqueuer", "OrderedEnqueuer", "Progbar", "Sequence", "SequenceEnqueuer",
           "disable_interactive_logging", "enable_interactive_logging", "get_source_inputs",
           "is_interactive_logging_enabled", "pad_sequences", "to_ordinal"]

_LOGGING = {"interactive": True}


def enable_interactive_logging() -> None:
    """Keras writes progress (progress bars, epoch lines) to stdout (the default)."""
    _LOGGING["interactive"] = True


def disable_interactive_logging() -> None:
    """Keras sends its progress messages to the ``keras`` Python logger instead of
    stdout (for jobs whose output is not a terminal)."""
    _LOGGING["interactive"] = False


def is_interactive_logging_enabled() -> bool:
    """Whether progress goes to stdout (True) or to the ``keras`` logger (False)."""
    return _LOGGING["interactive"]


def print_msg(message: str, line_break: bool = True) -> None:
    """Write a progress message where interactive logging says."""
    if _LOGGING["interactive"]:
        sys.stdout.write(message + ("\n" if line_break else ""))
        sys.stdout.flush()
    else:
        logging.getLogger("keras").info(message)


# -- Sequence and the enqueuers ------------------------------------------------------------
class Sequence:
    """A source of batches by index: subclasses define ``__len__`` (batches per epoch)
    and ``__getitem__(index)`` (one ``(x, y)`` or ``(x, y, sample_weight)`` batch), and
    may define ``on_epoch_end`` (e.g. to reshuffle). Safe to read from several threads,
    and each epoch sees every batch once."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__.")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must implement __len__.")

    def on_epoch_end(self) -> None:
        """Called between epochs; does nothing unless overridden."""

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]


class SequenceEnqueuer:
    """Base of the enqueuers: `start` worker threads that fill a queue, read it with
    `get`, `stop` them."""

    def __init__(self, sequence, use_multiprocessing: bool = False) -> None:
        self.sequence = sequence
        self.use_multiprocessing = use_multiprocessing
        self._threads: list = []
        self._stop = None
        self.queue = None

    def is_running(self) -> bool:
        return self._stop is not None and not self._stop.is_set()

    def start(self, workers: int = 1, max_queue_size: int = 10) -> None:
        """Start `workers` threads filling a queue of at most `max_queue_size` items."""
        self.workers = max(1, int(workers))
        self.queue = queue.Queue(max(1, int(max_queue_size)))
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, daemon=True)]
        for t in self._threads:
            t.start()

    def stop(self, timeout=None) -> None:
        """Stop the workers and drop what is queued."""
        if self._stop is None:
            return
        self._stop.set()
        if self.queue is not None:
            with self.queue.mutex:
                self.queue.queue.clear()
                self.queue.not_full.notify_all()
        for t in self._threads:
            t.join(timeout)
        self._threads = []

    def _put(self, item) -> bool:
        """Queue `item` unless stopped; False once stopped."""
        while not self._stop.is_set():
            try:
                self.queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        raise NotImplementedError

    def get(self):
        raise NotImplementedError


_DONE = object()


class OrderedEnqueuer(SequenceEnqueuer):
    """Reads a `Sequence` batch by batch, in order (or shuffled per epoch), epoch after
    epoch until stopped; `get` yields the batches. ``on_epoch_end`` is called when a new
    epoch starts."""

    def __init__(self, sequence, use_multiprocessing: bool = False, shuffle: bool = False):
        super().__init__(sequence, use_multiprocessing)
        self.shuffle = shuffle

    def _run(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        first = True
        with ThreadPoolExecutor(self.workers) as pool:
            while not self._stop.is_set():
                if not first:
                    self.sequence.on_epoch_end()
                first = False
                order = list(range(len(self.sequence)))
                if self.shuffle:
                    random.shuffle(order)
                for i in order:
                    if not self._put(pool.submit(self.sequence.__getitem__, i)):
                        return

    def get(self):
        """Yield the batches as the workers produce them (errors re-raised here)."""
        while self.is_running():
            try:
                item = self.queue.get(timeout=0.05)
            except queue.Empty:
                continue
            yield item.result()


class GeneratorEnqueuer(SequenceEnqueuer):
    """Reads a Python generator on a worker thread; `get` yields its items until it
    ends (its exceptions re-raised there)."""

    def __init__(self, generator, use_multiprocessing: bool = False, random_seed=None):
        super().__init__(generator, use_multiprocessing)
        self.random_seed = random_seed

    def _run(self) -> None:
        try:
            for item in self.sequence:
                if not self._put((item, None)):
                    return
        except Exception as exc:  # handed to the reader
            self._put((None, exc))
            return
        self._put((_DONE, None))

    def get(self):
        while self.is_running():
            try:
                item, exc = self.queue.get(timeout=0.05)
            except queue.Empty:
                continue
            if exc is not None:
                self.stop()
                raise exc
            if item is _DONE:
                return
            yield item


class SequenceBatches:
    """The batches of a `Sequence` as an endless iterator, epoch after epoch (shuffled
    per epoch with `shuffle`, ``on_epoch_end`` called as each new epoch starts): what
    `fit` / `evaluate` / `predict` read a Sequence through, ``len(sequence)`` steps per
    epoch."""

    def __init__(self, sequence, shuffle: bool) -> None:
        self.sequence, self.shuffle = sequence, shuffle
        self._order: list = []
        self._started = False

    def __iter__(self):
        return self

    def __next__(self):
        if not self._order:
            if self._started:
                self.sequence.on_epoch_end()
            self._started = True
            self._order = list(range(len(self.sequence)))
            if self.shuffle:
                random.shuffle(self._order)
            self._order.reverse()
            if not self._order:
                raise StopIteration
        batch = self.sequence[self._order.pop()]
        return tuple(batch) if isinstance(batch, list) else batch


# -- arrays ----------------------------------------------------------------------------------
def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre",
                  value=0.0) -> np.ndarray:
    """A ``(len(sequences), maxlen)`` array of the sequences, padded with `value` and
    truncated at the start (``'pre'``) or end (``'post'``); `maxlen` defaults to the
    longest. Items may be arrays: their shape is kept after the time axis."""
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    lengths, sample_shape = [], ()
    for x in sequences:
        try:
            lengths.append(len(x))
        except TypeError as err:
            raise ValueError(f"`sequences` must be a list of iterables. Found non-iterable: "
                             f"{x}") from err
        if len(x) and not sample_shape:
            sample_shape = np.asarray(x).shape[1:]
    if maxlen is None:
        maxlen = max(lengths) if lengths else 0
    is_text = np.issubdtype(dtype, np.str_) or np.issubdtype(dtype, np.bytes_)
    if isinstance(value, str) and dtype is not object and not is_text:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: "
                         f"{type(value)}\nYou should set `dtype=object` for variable length "
                         f"strings.")
    if padding not in ("pre", "post"):
        raise ValueError(f'Padding type "{padding}" not understood')
    if truncating not in ("pre", "post"):
        raise ValueError(f'Truncating type "{truncating}" not understood')
    out = np.full((len(sequences), maxlen, *sample_shape), value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s) or not maxlen:
            continue
        kept = s[-maxlen:] if truncating == "pre" else s[:maxlen]
        kept = np.asarray(kept, dtype=dtype)
        if kept.shape[1:] != tuple(sample_shape):
            raise ValueError(f"Shape of sample {kept.shape[1:]} of sequence at position {i} "
                             f"is different from expected shape {tuple(sample_shape)}")
        if padding == "post":
            out[i, :len(kept)] = kept
        else:
            out[i, -len(kept):] = kept
    return out


def to_ordinal(y, num_classes=None, dtype="float32") -> np.ndarray:
    """Ordinal encoding of class ids: class k becomes k ones then zeros, in
    ``num_classes - 1`` columns (`num_classes` defaults to ``max(y) + 1``)."""
    y, shape, num_classes = _flat_class_ids(y, num_classes)
    ranks = np.arange(num_classes - 1)
    out = (ranks[None, :] < y[:, None]).astype(dtype)
    return out.reshape((*shape, num_classes - 1))


# -- the functional API ----------------------------------------------------------------------
def get_source_inputs(tensor, layer=None, node_index=None) -> list:
    """The `Input` tensors that Keras tensor `tensor` is computed from (itself when it
    is one), first-seen order."""
    history = getattr(tensor, "_keras_history", None)
    if history is None:
        return [tensor]
    found: list = []
    _collect_sources(tensor, found, set())
    return found


def _collect_sources(tensor, found: list, seen: set) -> None:
    if id(tensor) in seen:
        return
    seen.add(id(tensor))
    history = getattr(tensor, "_keras_history", None)
    if history is None:
        found.append(tensor)
        return
    layer, node_index = history[0], history[1]
    nodes = getattr(layer, "_inbound_nodes", None) or getattr(layer, "inbound_nodes", [])
    node = nodes[node_index] if node_index < len(nodes) else None
    inputs = list(getattr(node, "input_tensors", [])) if node is not None else []
    if not inputs or type(layer).__name__ == "InputLayer":
        if all(t is not tensor for t in found):
            found.append(tensor)
        return
    for t in inputs:
        _collect_sources(t, found, seen)


# -- progress bar ------------------------------------------------------------------------------
class Progbar:
    """A text progress bar: ``update(current, values)`` / ``add(n, values)`` with
    ``values`` ``[(name, value), ...]`` shown as running averages (or as given, for
    `stateful_metrics`). `verbose` 1 redraws one line, 2 prints a line at the end."""

    def __init__(self, target, width=30, verbose=1, interval=0.05, stateful_metrics=None,
                 unit_name="step") -> None:
        self.target, self.width, self.verbose = target, width, verbose
        self.interval, self.unit_name = interval, unit_name
        self.stateful_metrics = set(stateful_metrics or ())
        self._values: dict = {}
        self._order: list = []
        self._seen_so_far = 0
        self._start = time.time()
        self._last_update = 0.0
        self._total_width = 0

    def update(self, current, values=None, finalize=None) -> None:
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for name, value in values or []:
            if name not in self._order:
                self._order.append(name)
            if name in self.stateful_metrics:
                self._values[name] = [value, 1]
            else:
                step = max(current - self._seen_so_far, 1)
                total, count = self._values.get(name, [0.0, 0])
                self._values[name] = [total + value * step, count + step]
        self._seen_so_far = current
        now = time.time()
        elapsed = now - self._start
        if self.verbose == 1:
            if not finalize and now - self._last_update < self.interval:
                return
            line = self._bar(current) + self._timing(current, elapsed, finalize)
            line += self._metrics()
            pad = max(self._total_width - len(line), 0)
            self._total_width = len(line)
            print_msg("\r" + line + " " * pad + ("\n" if finalize else ""), line_break=False)
        elif self.verbose == 2 and finalize:
            count = f"{current}/{self.target}" if self.target is not None else f"{current}"
            print_msg(f"{count} - {int(elapsed)}s{self._metrics()}")
        self._last_update = now

    def add(self, n, values=None) -> None:
        self.update(self._seen_so_far + n, values)

    def _bar(self, current) -> str:
        if self.target is None:
            return f"{current:7d}/Unknown"
        digits = len(str(self.target))
        bar = f"{current:{digits}d}/{self.target} ["
        filled = int(self.width * current / self.target) if self.target else self.width
        if filled > 0:
            bar += "=" * (filled - 1) + (">" if current < self.target else "=")
        return bar + "." * (self.width - filled) + "]"

    def _timing(self, current, elapsed, finalize) -> str:
        per_unit = elapsed / current if current else 0.0
        if finalize or self.target is None:
            return f" - {int(elapsed)}s {per_unit * 1e3:.0f}ms/{self.unit_name}"
        return f" - ETA: {int(per_unit * (self.target - current))}s"

    def _metrics(self) -> str:
        parts = []
        for name in self._order:
            total, count = self._values[name]
            mean = total / max(count, 1)
            parts.append(f" - {name}: {mean:.4f}" if abs(mean) > 1e-3 else
                         f" - {name}: {mean:.4e}")
        return "".join(parts)
