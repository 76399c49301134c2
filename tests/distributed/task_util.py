"""What the subprocess tasks of the cluster tests share (imported by the ``*_task.py``
scripts, which run with this folder first on ``sys.path``).

>>> # in a task script started with TF_CONFIG set:
>>> # config, server, worker = start_task()   # a ps task serves here until killed
"""

import contextlib
import time

import flowgraph as tf
from flowgraph.distributed import Server, replica_device_setter


def start_task(on_serve=None):
    """Start this process's `Server` from TF_CONFIG. A ps task calls `on_serve` (if
    given), serves until it is killed and returns None; a trainer gets ``(config, server,
    worker_device)``."""
    config = tf.estimator.RunConfig()  # reads TF_CONFIG
    server = Server(config.cluster_spec, job_name=config.task_type,
                    task_index=config.task_id)
    if config.task_type == "ps":
        if on_serve is not None:
            on_serve()
        server.join()
        return None
    return config, server, f"/job:{config.task_type}/task:{config.task_id}"


@contextlib.contextmanager
def replica_graph(config, worker: str):
    """A new default graph whose variables the replica device setter puts on the ps."""
    with tf.Graph().as_default(), tf.device(
            replica_device_setter(worker_device=worker, cluster=config.cluster_spec)):
        yield


def linear_model(bias: bool = True):
    """``y = x.w (+ b)`` with 3 features and a squared loss, variables starting at zero:
    returns ``(global_step, x, y, w, b, loss)`` (``b`` None without a bias)."""
    step = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 1])
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    prediction = tf.matmul(x, w)
    b = None
    if bias:
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        prediction = prediction + b
    loss = tf.reduce_mean(tf.square(prediction - y))
    return step, x, y, w, b, loss


def wait_for_chief(server, variables=None, timeout_s: float = 60.0) -> None:
    """Poll (every 0.05 s) until the chief has initialized the variables; a ps that is
    still starting (UnavailableError) is waited for too, as MonitoredTrainingSession
    does."""
    ready = tf.report_uninitialized_variables(variables)
    deadline = time.monotonic() + timeout_s
    with tf.Session(server.target) as probe:
        while True:
            try:
                if not len(probe.run(ready)):
                    return
            except tf.errors.UnavailableError:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.05)
