"""`Session` and `InteractiveSession`: run parts of a graph on the local devices.

Example
-------
>>> import flowgraph as tf
>>> g = tf.Graph()
>>> with g.as_default():
...     x = tf.placeholder(tf.float32, [None])
...     y = x * 2.0
>>> with tf.Session(graph=g) as sess:
...     print(sess.run(y, feed_dict={x: [1.0, 2.0]}))
[2. 4.]
"""

from __future__ import annotations

import contextlib
import logging
import threading
import warnings
import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np

from flowgraph.backends import DeviceAttributes, list_devices
from flowgraph.framework import errors
from flowgraph.framework.graph import Graph, _default_session_stack, get_default_graph
from flowgraph.framework.graph_release import release_with
from flowgraph.framework.nest import is_nested
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.resources import VariableState, manager_for_target, reset_target
from flowgraph.framework.tf_formats.graph_def import GraphDefDict
from flowgraph.runtime import _executor, plan_cache, session_callable
from flowgraph.runtime.bind import KernelCache
from flowgraph.runtime.config import (
    ConfigProto,
    RunMetadata,
    RunOptions,
    context_config,
)
from flowgraph.runtime.cost_model import CostModel
from flowgraph.runtime.fetch import (
    FetchMapper,
    fetch_key,
    flatten_feed_dict,
    int_fits,
    wrapped_ints,
)
from flowgraph.runtime.memory_schedule import budget_key, measure_sizes, pool_cap
from flowgraph.runtime.plan import (
    CompiledPlan,
    CompileEnv,
    check_feeds_and_fetches,
    compile_plan,
    emit,
)
from flowgraph.runtime.prune import needed_ops
from flowgraph.runtime.session_feeds import return_fed_values, string_feed
from flowgraph.runtime.specialize import ShapeVariants, first_plan, wants_variants
from flowgraph.runtime.step import FastRun, StepContext, step_ids, watchdog
from flowgraph.runtime.step_stats import fill_step_stats

logger = logging.getLogger("tensorflow")
# Session classes for target schemes served above this layer ("grpc://": the
# distributed runtime), registered by `register_target_scheme` from the top of the
# package, so that this layer imports nothing above it.
_TARGET_SCHEMES: dict[str, object] = {}
# Open sessions on the default target '': `Session.reset("")` closes them all, as
# TensorFlow's reset of its in-process sessions does.
_LOCAL_SESSIONS: weakref.WeakSet = weakref.WeakSet()


def partition_graph_def(partition: dict) -> GraphDefDict:
    """One device's partition as ``RunMetadata.partition_graphs`` holds it: a
    `tf.GraphDef` (still the dict, with its ``device``) whose nodes name their device,
    as TensorFlow's partition graphs do."""
    device = partition.get("device", "")
    return GraphDefDict({**partition, "node": [
        {**node, "device": node.get("device") or device} for node in partition["node"]]})


def register_target_scheme(prefix: str, session_class_loader) -> None:
    """Make ``Session(target)`` with a target starting with `prefix` an instance of the
    class `session_class_loader()` returns (loaded on first use)."""
    _TARGET_SCHEMES[prefix] = session_class_loader




class Session:
    """A connection to local devices that runs (parts of) a `Graph`.

    Parameters
    ----------
    target : str
        ``''`` for an in-process session with private state; ``'local://NAME'`` to share
        variables with other sessions on the same name.
    graph : Graph, optional
        The graph to run (default: the default graph).
    config : ConfigProto, optional
        Threads, device counts, placement logging and soft placement.
    """

    def __new__(cls, target: str = "", *args, **kwargs):
        text = target.decode() if isinstance(target, bytes) else (target or "")
        if cls is Session and isinstance(text, str):
            for prefix, loader in _TARGET_SCHEMES.items():
                if text.startswith(prefix):
                    cls = loader()
                    break
        return super().__new__(cls)

    def __init__(self, target: str = "", graph: Graph | None = None,
                 config: ConfigProto | None = None) -> None:
        if graph is not None and not isinstance(graph, Graph):
            raise TypeError(f"graph must be a tf.Graph, but got {type(graph).__name__}")
        if config is not None and not isinstance(config, ConfigProto):
            raise TypeError(f"config must be a tf.ConfigProto, but got {type(config).__name__}")
        self._target = target.decode() if isinstance(target, bytes) else (target or "")
        if self._target.startswith("grpc://"):
            raise errors.UnimplementedError(
                None, None,
                f"{type(self).__name__} target '{self._target}': only tf.Session runs on a "
                "grpc:// target; flowgraph will not silently run it locally. Use "
                "tf.Session(target), or '' / 'local://NAME' for an in-process session.")
        if self._target and not self._target.startswith("local://"):
            # TensorFlow's wording and type: no session factory claims the target
            raise errors.NotFoundError(
                None, None,
                f"No session factory registered for the given session options: target "
                f"'{self._target}' is not supported: use '', 'local://NAME' or "
                "'grpc://host:port'."
            )
        self._graph = graph if graph is not None else get_default_graph()
        # no config: the process-wide tf.config settings (TensorFlow 2's Session does so)
        self._config = config if config is not None else context_config()
        self._resources = manager_for_target(self._target)
        self.devices = list_devices(self._config.device_count)
        if not self.devices:
            raise errors.InvalidArgumentError(
                None, None, "No devices: ConfigProto(device_count=...) removed them all"
            )
        self._apply_memory_fraction()
        self._plans: dict = {}
        self._fetch_mappers: dict = {}
        self._feed_names: dict = {}
        # (fetch key, feed keys...) -> FastRun, for runs without options (step.py)
        self._fast_runs: dict = {}
        self._graph_edits = self._graph._edits  # plans above were made at this count
        self._kernels = KernelCache(self._resources, self)
        self._compile_env = CompileEnv(self._graph, self.devices, self._config, self._kernels,
                                       CostModel())
        self._lock = threading.Lock()
        self._closed = False
        self._closed_by_reset = False
        self._live_steps: set = set()
        threads = self._config.inter_op_threads()
        self._pool = _executor.WorkerPool(threads - 1) if threads > 1 else None
        # Threads per kernel during this session's runs (0: leave the backends as they are)
        self._intra_op = max(0, int(self._config.intra_op_parallelism_threads or 0))
        self._backends = list({id(d.backend): d.backend for d in self.devices}.values())
        self._context_stack: list = []
        if not self._target:
            _LOCAL_SESSIONS.add(self)

    def _apply_memory_fraction(self) -> None:
        """``gpu_options.per_process_gpu_memory_fraction``: a fraction in (0, 1] limits
        this session's devices with memory of their own to that fraction of it, for the
        whole process; 0 (the default) leaves the current limit (docs/devices.md)."""
        gpu_options = getattr(self._config, "gpu_options", None)
        fraction = float(getattr(gpu_options, "per_process_gpu_memory_fraction", 0) or 0)
        if fraction == 0:
            return
        if not 0.0 < fraction <= 1.0:
            raise errors.InvalidArgumentError(
                None, None,
                f"GPUOptions.per_process_gpu_memory_fraction must be in (0, 1], got "
                f"{fraction} (0, the default, leaves each device's limit as it is)")
        for backend in {id(d.backend): d.backend for d in self.devices}.values():
            backend.set_memory_fraction(
                [d for d in self.devices if d.backend is backend], fraction)

    # -- properties --------------------------------------------------------------------
    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def graph_def(self) -> dict:
        return self._graph.as_graph_def()

    @property
    def sess_str(self) -> bytes:
        """The target, as bytes (as TensorFlow returns it)."""
        return self._target.encode()

    @property
    def config(self) -> ConfigProto:
        return self._config

    @property
    def optimizer_options(self):
        return self._config.graph_options.optimizer_options

    def list_devices(self) -> list:
        """The devices this session can use (name, device_type, memory_limit_bytes)."""
        return [DeviceAttributes(d) for d in self.devices]

    # -- context management ------------------------------------------------------------
    def as_default(self):
        """Context manager making this the default session (and its graph the default)."""
        return _DefaultSession(self)

    def __enter__(self) -> Session:
        ctx = _DefaultSession(self, enter_graph=True)
        ctx.__enter__()
        self._context_stack.append(ctx)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._context_stack:
            self._context_stack.pop().__exit__(exc_type, exc, tb)
        self.close()

    def close(self) -> None:
        """Release the session's threads; further `run` calls raise RuntimeError."""
        if self._closed:
            return
        self._closed = True
        # Runs still blocked in this session (e.g. a queue runner's enqueue) end with
        # CancelledError, as in TensorFlow; private state is released.
        for context in list(self._live_steps):
            context.cancel(errors.CancelledError(None, None, "Session has been closed."))
        if not self._target:
            self._resources.clear()
        if self._pool is not None:
            self._pool.close()
        self._plans.clear()
        self._kernels.clear()
        self.__dict__.pop("_partial_runs", None)
        # No cycle may keep the graph alive once closed (framework/graph_release.py).
        self._fetch_mappers.clear()
        self._feed_names.clear()
        self._fast_runs.clear()
        plan_cache.forget_texts(self._compile_env)
        self._kernels._session = None

    def __del__(self) -> None:
        try:
            if self._pool is not None and not self._closed:
                self._pool.close()
        except Exception:
            pass

    def _closed_error(self) -> Exception:
        """What using a closed session raises: RuntimeError after `close`; after
        ``Session.reset("")`` closed it, TensorFlow's CancelledError."""
        # getattr: RemoteSession (distributed/) does not run Session.__init__
        if getattr(self, "_closed_by_reset", False):
            return errors.CancelledError(None, None, "Session has been closed.")
        return RuntimeError("Attempted to use a closed Session.")

    @staticmethod
    def reset(target: str, containers: list[str] | None = None, config=None) -> None:
        """Clear the resource containers (variables, queues) of a named target: a
        ``'local://NAME'`` target, or every task of the cluster of a ``'grpc://'`` one.

        On the default target ``''`` it closes every open in-process session, as
        TensorFlow does: their next run raises CancelledError.
        """
        text = target.decode() if isinstance(target, bytes) else target
        if not text:
            for session in list(_LOCAL_SESSIONS):
                if not session._closed:  # closing drops its private state too
                    session.close()
                    session._closed_by_reset = True
            return
        for prefix, loader in _TARGET_SCHEMES.items():
            if text and text.startswith(prefix):
                loader().reset(text, containers, config)
                return
        reset_target(text, containers)

    # -- run ---------------------------------------------------------------------------
    def run(self, fetches, feed_dict: dict | None = None, options: RunOptions | None = None,
            run_metadata: RunMetadata | None = None) -> Any:
        """Compute `fetches` (any nesting of tensors, ops and names), feeding `feed_dict`.

        With ``ConfigProto(intra_op_parallelism_threads=n)``, n > 0, matrix products and
        the kernel thread pool run on `n` threads during the run (the process-wide
        settings are restored after); with 0 (the default), a backend may still lower its
        thread count while other processes keep the cores busy (docs/performance.md).
        """
        if self._closed:
            raise self._closed_error()
        limits = None
        for backend in self._backends:
            limit = backend.intra_op_limit(self._intra_op)
            if limit is not None:
                limits = limits or []
                limits.append(limit)
        if limits:
            with contextlib.ExitStack() as stack:
                for limit in limits:
                    stack.enter_context(limit)
                return self._run(fetches, feed_dict, options, run_metadata)
        return self._run(fetches, feed_dict, options, run_metadata)

    def _run(self, fetches, feed_dict, options, run_metadata) -> Any:
        if self._graph._edits != self._graph_edits:  # ops rewired since: recompile
            self._graph_edits = self._graph._edits
            self._plans.clear()
            self._fast_runs.clear()
        key = fetch_key(fetches)
        plain = options is None and run_metadata is None and key is not None and (
            feed_dict is None or type(feed_dict) is dict)
        if plain:  # a repeated plain run takes its signature's FastRun (step.py), if any
            fast_key = (key, *feed_dict) if feed_dict else (key,)
            fast = self._fast_runs.get(fast_key)
            if fast is not None:
                return fast.run(self, feed_dict)
        if not self._graph._ops:  # before fetches are looked up, as in TF
            raise RuntimeError("The Session graph is empty. Add operations to the graph "
                               "before calling run().")
        mapper = self._fetch_mappers.get(key) if key is not None else None
        if mapper is None:
            mapper = FetchMapper.build(self._graph, fetches)
            if key is not None:
                self._fetch_mappers[key] = mapper
        if feed_dict is not None and type(feed_dict) is not dict and \
                not isinstance(feed_dict, Mapping):
            raise TypeError(
                f"Session.run: feed_dict must be a dictionary mapping graph elements "
                f"(tensors or their names) to values, but got a {type(feed_dict).__name__}: "
                f"{feed_dict!r:.80}. Pass feed_dict={{placeholder: value, ...}}.")
        if feed_dict and any(type(k) is not Tensor and (
                is_nested(k) or hasattr(k, "_feed_components")) for k in feed_dict):
            feed_dict = flatten_feed_dict(feed_dict)
            plain = False
        feed_tensors, feed_values = self._process_feeds(feed_dict) if feed_dict else ((), ())
        budget = options.memory_budget_bytes if options is not None else 0
        # With a budget, plans are specialized per fed-shape signature (docs/memory.md).
        shapes = tuple(map(np.shape, feed_values)) \
            if budget or self._config.memory_budget_bytes else None
        sig = (key, feed_tensors) if shapes is None else \
            (key, feed_tensors, budget_key(budget), shapes)
        cp = self._plans.get(sig) if key is not None else None
        if cp is None or cp.measured_sizes is not None:
            # Structures without a cheap key (nested, namedtuples) still share plans by
            # the graph elements they flatten to.
            elements = (tuple(mapper.unique_tensors), tuple(mapper.unique_ops), feed_tensors)
            if shapes is not None:
                elements += (budget_key(budget), shapes)
            cp = self._plans.get(elements)
            if cp is None or cp.measured_sizes is not None:  # an earlier run measured it
                cp = first_plan(self._compile, mapper, feed_tensors, budget, feed_values,
                                shapes is not None, cp and cp.measured_sizes, self._config)
                self._plans[elements] = cp
            if key is not None:
                self._plans[sig] = cp
        variants = getattr(cp, "shape_variants", None)
        if variants is not None:  # a plan specialized to the fed shapes (specialize.py)
            cp = variants.pick(cp, feed_values, lambda: self._compile(
                mapper, feed_tensors, budget, feed_values, True))
        values = self._execute(cp, feed_tensors, feed_values, options, run_metadata)
        if feed_tensors and return_fed_values(values, mapper.unique_tensors, feed_tensors,
                                               feed_values):
            plain = False  # the FastRun would give the executor's value
        if plain and variants is None and self._fast_path_ok(cp, feed_dict, feed_tensors,
                                                             feed_values):
            self._fast_runs[fast_key] = FastRun(cp, feed_tensors, feed_values,
                                                FastRun.rebuilder(fetches, mapper))
        return mapper.rebuild(values)

    def _fast_path_ok(self, cp, feed_dict, feed_tensors, feed_values) -> bool:
        """Whether later runs of this signature may take its `FastRun`: one tensor per
        feed key (no structured feeds), no deadline or budget from the config, and a plan
        that needs nothing beyond feeding, executing and fetching."""
        config = self._config
        return (not config.operation_timeout_in_ms and not config.memory_budget_bytes
                and len(feed_tensors) == len(feed_dict or ())
                and not any(hasattr(k, "_feed_tensors") for k in feed_dict or ())
                and not cp.plain_quantized and FastRun.usable(cp, feed_tensors, feed_values))

    def _compile(self, mapper: FetchMapper, feed_tensors, budget=0,
                 feed_values=(), specialized=False, measured=None) -> CompiledPlan:
        env = self._compile_env
        fetches, targets, feeds = mapper.unique_tensors, mapper.unique_ops, list(feed_tensors)
        with self._lock:
            self._graph._finalized_for_run = True
            shapes = {t: np.shape(v) for t, v in zip(feed_tensors, feed_values)}
            # A graph that fingerprints like one compiled before (the next Estimator call's)
            # takes the finished plan; otherwise compile, keeping the result for the next.
            key = None
            if not measured and not budget and self._graph._finalized:
                check_feeds_and_fetches(self._graph, fetches, targets, feeds)
                key = plan_cache.plan_key(
                    env, fetches, targets, feeds, needed_ops(fetches, targets, set(feeds)),
                    memory_budget=budget, shape_specialized=specialized,
                    feed_shapes=shapes)
            cp = _finished_plan(plan_cache.restore_finished(key, env), fetches, env)
            if cp is None:
                cp = compile_plan(env, fetches, targets, feeds, memory_budget=budget,
                                  feed_shapes=shapes, shape_specialized=specialized,
                                  measured_sizes=measured)
                plan_cache.store_finished(key, env, cp)
            fed = set(feeds)
            # TF returns a computed quantized value as its plain integer type (a fed one
            # comes back as fed, in the structured type)
            cp.plain_quantized = [i for i, t in enumerate(fetches)
                                  if t.dtype.base_dtype.is_quantized and t not in fed]
        options = self._config.graph_options
        cp.shape_variants = ShapeVariants() if not specialized and wants_variants(
            cp.nodes, feed_tensors, options.rewrite_options, options.optimizer_options) \
            else None
        return cp

    def _execute(self, cp: CompiledPlan, feed_tensors, feed_values, options, run_metadata):
        tracing = bool(options is not None and options.trace_level > 0
                       and run_metadata is not None)
        mem = cp.memory_schedule
        measuring = mem is not None and mem.needs_measure and cp.measured_sizes is None
        context = StepContext(next(step_ids), self, options, cp.needs_rendezvous)
        step = _executor.Step(cp.plan, context, self._pool, tracing or measuring)
        context.step = step
        slots = [cp.feed_slots[t] for t in feed_tensors]
        timeout_ms = options.timeout_in_ms if options is not None else 0
        if not timeout_ms:
            timeout_ms = self._config.operation_timeout_in_ms
        alarm = None
        if timeout_ms and timeout_ms > 0:
            alarm = watchdog.schedule(timeout_ms / 1000.0, context.cancel,
                                      errors.DeadlineExceededError(
                None, None, f"Timed out after {timeout_ms} ms waiting for the step to "
                "finish (RunOptions.timeout_in_ms or ConfigProto.operation_timeout_in_ms)"))
        live = self._live_steps
        live.add(context)
        try:
            if mem is None or mem.pool_cap is None:
                values = step.run(slots, list(feed_values), cp.fetch_slots)
            else:
                with pool_cap(mem, cp.devices):  # the CPU buffer pool within the budget
                    values = step.run(slots, list(feed_values), cp.fetch_slots)
        finally:
            for device in cp.async_devices:
                device.backend.synchronize(device)
            live.discard(context)
            context.step = None  # break the step <-> context cycle: free values now
            context.cancelled = None  # and error -> traceback -> this frame -> context
            if alarm is not None:
                watchdog.cancel(alarm)
        if measuring:  # sizes shapes could not tell: the next run recompiles with them
            cp.measured_sizes = measure_sizes(cp, step.trace)
        if tracing:
            fill_step_stats(run_metadata, cp, step.trace, {
                s: int(getattr(v, "nbytes", 0) or 0) for s, v in zip(slots, feed_values)})
            self._compile_env.costs.observe(run_metadata.step_stats, cp.devices)
        if run_metadata is not None and options is not None and options.output_partition_graphs:
            run_metadata.partition_graphs = [partition_graph_def(g)
                                             for g in cp.partition_graphs]
        for i, device in cp.fetch_to_host:
            values[i] = device.backend.to_host(values[i], device)
        for i, deref in enumerate(cp.deref_fetch):
            if deref and isinstance(values[i], VariableState):
                value = values[i].read()
                for j, device in cp.fetch_to_host:  # a variable on a device: copy it back
                    if j == i:
                        value = device.backend.to_host(value, device)
                values[i] = np.array(value)
        for i in cp.plain_quantized:
            v = values[i]
            if isinstance(v, np.ndarray) and v.dtype.names:
                values[i] = v.view(v.dtype[0])
        for i, v in enumerate(values):
            if type(v) is np.ndarray:
                if v.ndim == 0:
                    values[i] = v[()]  # TF returns NumPy scalars for 0-d results
                elif not v.flags.writeable:
                    values[i] = v.copy()
        return values

    # -- feeds -------------------------------------------------------------------------
    def _process_feeds(self, feed_dict: dict):
        tensors = []
        values = []
        names = self._feed_names
        graph = self._graph
        for key, value in feed_dict.items():
            if type(key) is Tensor:
                t = key
                if key._op._graph is not graph:
                    raise TypeError(f"Cannot interpret feed_dict key as Tensor: Tensor "
                                    f"{key.name} is not an element of this graph (it belongs "
                                    "to another Graph than the session's).")
            else:
                t = names.get(key)
            if t is None:
                t = self._resolve_feed_key(key)
                try:
                    names[key] = t
                except TypeError:
                    pass
            if t is None:  # a structured feed (e.g. SparseTensor) expanded below
                for sub_t, sub_v in _expand_structured_feed(key, value):
                    tensors.append(sub_t)
                    values.append(self._convert_feed(sub_t, sub_v))
                continue
            tensors.append(t)
            values.append(self._convert_feed(t, value))
        return tuple(tensors), values

    def _resolve_feed_key(self, key):
        if hasattr(key, "_feed_tensors"):
            return None
        try:
            el = self._graph.as_graph_element(key, allow_operation=False)
        except (TypeError, ValueError, KeyError) as e:
            why = e.args[0] if e.args else e  # a KeyError's str() would quote it
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: {why}") from None
        return el

    def _convert_feed(self, t: Tensor, value):
        dtype = t._dtype.base_dtype
        np_dtype = dtype.as_numpy_dtype
        if isinstance(value, Tensor | Operation):
            raise TypeError(
                f"The value of a feed cannot be a tf.Tensor object (feeding {t.name}). "
                "Acceptable feed values include Python scalars, strings, lists, numpy "
                "ndarrays."
            )
        if type(value) is np.ndarray and value.dtype == np_dtype:
            arr = value
        else:
            is_string = dtype.name == "string"
            if isinstance(value, int) and (is_string or not int_fits(value, np_dtype)):
                # TensorFlow's check for a Python int alone: it must keep its value
                raise TypeError(
                    f"Type of feed value {value} with type {type(value)} is not compatible "
                    f"with Tensor '{t.name}' of dtype {dtype.name}: it does not fit. Feed a "
                    f"{'string' if is_string else 'smaller value'} or give the tensor a "
                    "larger type (e.g. int64).")
            try:
                arr = np.asarray(value, dtype=object if is_string else np_dtype)
            except OverflowError:
                arr = wrapped_ints(value, np_dtype, t)
            except (TypeError, ValueError) as e:
                raise ValueError(
                    f"Cannot feed value {value!r} to tensor '{t.name}' of dtype "
                    f"{dtype.name}: {e}"
                ) from None
        if arr.dtype == object and dtype.name == "string":
            arr = string_feed(arr, t)
        shape = t._shape
        dims = shape._dims
        if dims is not None:
            ashape = arr.shape
            ok = len(ashape) == len(dims) and all(
                d._value is None or d._value == a for d, a in zip(dims, ashape)
            )
            if not ok:
                raise ValueError(
                    f"Cannot feed value of shape {ashape} for Tensor '{t.name}', which has "
                    f"shape '{shape}'"
                )
        return arr

    # -- partial run -------------------------------------------------------------------
    def partial_run_setup(self, fetches, feeds=None) -> str:
        """Prepare a partial run: `feeds` will be fed and `fetches` fetched over calls.

        Returns a handle string for `partial_run`.
        """
        from flowgraph.runtime.partial_run import PartialRun

        if self._closed:
            raise self._closed_error()
        return PartialRun.setup(self, fetches, feeds or []).handle

    def partial_run(self, handle, fetches, feed_dict=None):
        """Continue partial run `handle`, feeding `feed_dict` and computing `fetches`."""
        from flowgraph.runtime.partial_run import lookup

        if self._closed:
            raise self._closed_error()
        return lookup(self, handle).run(fetches, feed_dict or {})

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """A function that runs `fetches`, taking the `feed_list` values positionally.

        As in TensorFlow: with a `feed_list` the function is `run` with those feeds (it
        also takes `run`'s ``options``/``run_metadata``); without one, `fetches` are
        checked now and the function takes no feeds, and ``options``/``run_metadata``
        only with `accept_options`.
        """
        return session_callable.make_callable(self, fetches, feed_list, accept_options)


class InteractiveSession(Session):
    """A session that installs itself as the default session on construction.

    Opening one while another is open warns (`warnings.warn`), as TensorFlow does.
    """

    _count_lock = threading.Lock()
    _active_count = 0  # open InteractiveSessions, guarded by _count_lock

    def __init__(self, target: str = "", graph: Graph | None = None,
                 config: ConfigProto | None = None) -> None:
        super().__init__(target, graph, config)
        with InteractiveSession._count_lock:
            if InteractiveSession._active_count > 0:
                warnings.warn(
                    "An interactive session is already active: the open ones keep their "
                    "resources (and memory) until each is closed with "
                    "`InteractiveSession.close()`.", stacklevel=2)
            InteractiveSession._active_count += 1
        self._counted = True
        self._default = _DefaultSession(self, enter_graph=True)
        self._default.__enter__()

    def close(self) -> None:
        with InteractiveSession._count_lock:
            if getattr(self, "_counted", False):
                InteractiveSession._active_count -= 1
                self._counted = False
        if getattr(self, "_default", None) is not None:
            try:
                self._default.__exit__(None, None, None)
            except Exception:
                pass
            self._default = None
        super().close()


class _DefaultSession:
    def __init__(self, session: Session, enter_graph: bool = False) -> None:
        self._session = session
        self._graph_ctx = session.graph.as_default() if enter_graph else None

    def __enter__(self) -> Session:
        if self._graph_ctx is not None:
            self._graph_ctx.__enter__()
        _default_session_stack().append(self._session)
        return self._session

    def __exit__(self, *exc) -> None:
        stack = _default_session_stack()
        if stack and stack[-1] is self._session:
            stack.pop()
        elif any(s is self._session for s in stack):  # TF's check, and its error type
            raise AssertionError(
                "Nesting violated for default stack of Session objects: a session's "
                "as_default() block was exited while a session entered after it was still "
                "the default. Exit `with` blocks in the reverse order.")
        if self._graph_ctx is not None:
            self._graph_ctx.__exit__(*exc)


def _finished_plan(finished, fetches, env) -> CompiledPlan | None:
    """The `CompiledPlan` of a finished plan from `plan_cache.restore_finished`, or None."""
    if finished is None:
        return None
    table = finished.table
    cp = emit(table, finished.fetch_slots, None)
    release_with(cp, finished.plan_ops)  # the rewrites' own ops die with the plan
    cp.deref_fetch = [t.dtype.is_ref_dtype for t in fetches]
    cp.fetch_to_host = []  # finished plans run on host devices only
    cp.partition_graphs = finished.partition_graphs
    cp.devices = sorted({n.placed_on for n in table.nodes} or {env.devices[0]},
                        key=lambda d: d.name)
    for name, value in finished.slots.items():
        setattr(cp, name, value)
    return cp


def _expand_structured_feed(key, value):
    return key._feed_tensors(value)
