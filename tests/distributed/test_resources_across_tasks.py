"""Resources used from another task's graph: queues and tf.data iterators on a ps read
and written by a worker's ops (they run on the resource's task, as in TensorFlow), the
clear errors where flowgraph cannot follow, and ``log_device_placement`` on a grpc://
session. Servers run in this process (a two-task cluster)."""

import threading
import time

import numpy as np
import pytest
from conftest import free_port

import flowgraph as tf
from flowgraph.distributed import ClusterSpec, Server
from flowgraph.distributed.master import plan_run
from flowgraph.distributed.worker import TaskService
from flowgraph.framework import errors

PS, WORKER = "/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0"


@pytest.fixture(scope="module")
def cluster():
    spec = ClusterSpec({"ps": [f"localhost:{free_port()}"],
                        "worker": [f"localhost:{free_port()}"]})
    ps, worker = Server(spec, "ps", 0), Server(spec, "worker", 0)
    yield spec, worker
    for server in (ps, worker):
        server.stop()


def _stage_tasks(plan) -> dict:
    return {op.name: stage.task for stage in plan.stages for op in stage.ops}


def test_queue_ops_of_a_worker_run_on_the_queue_task(cluster):
    spec, worker = cluster
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            q = tf.FIFOQueue(10, tf.float32, shapes=[[]], shared_name="q_ops", name="q")
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [None])
            enqueue = q.enqueue_many(x * 2.0)
            dequeue = q.dequeue_many(2) + 1.0
            size = q.size()
            close = q.close()
        plan = plan_run(tf.get_default_graph(), [dequeue], [], {}, WORKER, spec)
        where = _stage_tasks(plan)
        assert where[dequeue.op.inputs[0].op.name] == PS  # the dequeue follows its queue
        assert where[dequeue.op.name] == WORKER  # only its values travel
        with tf.Session(worker.target) as sess:
            sess.run(enqueue, {x: [1.0, 2.0, 3.0]})
            assert sess.run(size) == 3
            np.testing.assert_allclose(sess.run(dequeue), [3.0, 5.0])
            sess.run(close)
            with pytest.raises(errors.OutOfRangeError, match=PS):
                sess.run(dequeue)  # one element left of two, closed: as TensorFlow


def test_a_token_queue_on_the_ps_is_shared_by_two_graphs_and_a_dequeue_waits(cluster):
    _, worker = cluster

    def graph():
        g = tf.Graph()
        with g.as_default():
            with tf.device("/job:ps/task:0"):
                q = tf.FIFOQueue(4, tf.int64, shapes=[[]], shared_name="tokens", name="tq")
            with tf.device("/job:worker/task:0"):
                token = q.dequeue() * 10
            return g, q, token

    chief_graph, chief_q, _ = graph()
    with chief_graph.as_default():
        issue = chief_q.enqueue(tf.constant(7, tf.int64))
    worker_graph, worker_q, token = graph()
    chief = tf.Session(worker.target, graph=chief_graph)
    trainer = tf.Session(worker.target, graph=worker_graph)
    try:
        late = threading.Timer(0.3, chief.run, [issue])
        late.start()
        start = time.monotonic()
        assert trainer.run(token) == 70  # blocked on the ps until the chief's token came
        assert time.monotonic() - start >= 0.25
        late.join()
        with worker_graph.as_default():
            assert trainer.run(worker_q.size()) == 0
    finally:
        chief.close()
        trainer.close()


def test_an_op_taking_resources_of_two_tasks_is_refused_naming_both():
    spec = {"ps": ["h:1"], "worker": ["h:2"]}
    with tf.Graph().as_default() as g:
        with tf.device("/job:ps/task:0"):
            names = tf.FIFOQueue(2, tf.string, shapes=[[]], name="names")
        with tf.device("/job:worker/task:0"):
            local = tf.FIFOQueue(2, tf.float32, shapes=[[]], name="local")
        both = names.enqueue(local.queue_ref)  # a handle is no value to send
        with pytest.raises(errors.UnimplementedError) as info:
            plan_run(g, [], [both], {}, WORKER, spec)
    message = str(info.value)
    assert f"{both.name}" in message and PS in message and WORKER in message
    assert "'names'" in message and "'local'" in message and "tf.device" in message


def test_an_iterator_on_the_ps_serves_a_worker_and_ends_with_out_of_range(cluster):
    spec, worker = cluster
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            dataset = tf.data.Dataset.range(3).map(lambda v: v * 2)
            iterator = tf.data.make_one_shot_iterator(dataset)
        with tf.device("/job:worker/task:0"):
            element = iterator.get_next() + 1
        where = _stage_tasks(plan_run(tf.get_default_graph(), [element], [], {}, WORKER,
                                      spec))
        assert where["IteratorGetNext"] == PS and where[element.op.name] == WORKER
        with tf.Session(worker.target) as sess:
            assert sess.run(element) == 1
            # another run signature, another stage graph: the same iterator
            assert sess.run([element, element * 10]) == [3, 30]
            assert sess.run(element) == 5
            with pytest.raises(errors.OutOfRangeError, match=PS):
                sess.run(element)
        with tf.Session(worker.target) as sess:  # a new session: a new iterator, as in TF
            assert sess.run(element) == 1


def test_an_initializable_iterator_restarts_and_graphs_keep_their_own_pipelines(cluster):
    _, worker = cluster

    def graph(start):
        g = tf.Graph()
        with g.as_default():
            with tf.device("/job:ps/task:0"):
                ds = tf.data.Dataset.range(start, start + 4).batch(2)
                iterator = tf.data.make_initializable_iterator(ds)
            return g, iterator, iterator.get_next()

    first, second = graph(0), graph(100)  # identical structure, other pipelines
    sessions = [tf.Session(worker.target, graph=g) for g, _, _ in (first, second)]
    try:
        for sess, (_, iterator, batch), start in zip(sessions, (first, second), (0, 100)):
            sess.run(iterator.initializer)
            assert sess.run(batch).tolist() == [start, start + 1]
            sess.run(iterator.initializer)  # back to the start
            assert sess.run(batch).tolist() == [start, start + 1]
            assert sess.run(batch).tolist() == [start + 2, start + 3]
    finally:
        for sess in sessions:
            sess.close()


def test_a_pipeline_on_a_task_of_another_process_is_refused_when_planned():
    # The ps address need not answer: the master refuses the plan before calling it.
    spec = ClusterSpec({"ps": [f"localhost:{free_port()}"],
                        "worker": [f"localhost:{free_port()}"]})
    worker = Server(spec, "worker", 0)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                iterator = tf.data.make_one_shot_iterator(tf.data.Dataset.range(3))
            element = iterator.get_next()
            with tf.Session(worker.target) as sess:
                with pytest.raises(errors.UnimplementedError) as info:
                    sess.run(element)
    finally:
        worker.stop()
    message = str(info.value)
    assert "'OneShotIterator' (OneShotIterator)" in message
    assert PS in message and "another process" in message
    assert "tf.device('/job:worker/task:0')" in message


def test_numpy_input_fn_arrays_on_a_task_of_another_process_are_refused_when_planned():
    spec = ClusterSpec({"ps": [f"localhost:{free_port()}"],
                        "worker": [f"localhost:{free_port()}"]})
    worker = Server(spec, "worker", 0)
    x = np.arange(12.0, dtype=np.float32).reshape(6, 2)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                features = tf.estimator.inputs.numpy_input_fn(
                    {"x": x}, batch_size=2, shuffle=False)()
            with tf.Session(worker.target) as sess:
                with pytest.raises(errors.UnimplementedError) as info:
                    sess.run(features["x"])
    finally:
        worker.stop()
    message = str(info.value)
    assert "(NumpyBatchSource) reads the NumPy arrays of a numpy_input_fn" in message
    assert PS in message and "another process" in message
    assert "tf.device('/job:worker/task:0')" in message


def test_numpy_input_fn_on_the_session_task_reads_its_arrays_with_ps_variables(cluster):
    spec, worker = cluster
    x = np.arange(12.0, dtype=np.float32).reshape(6, 2)
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(
                worker_device="/job:worker/task:0", cluster=spec)):
            features = tf.estimator.inputs.numpy_input_fn({"x": x}, batch_size=3,
                                                          shuffle=False)()
            total = tf.Variable(0.0, name="numpy_total")
            add = tf.assign_add(total, tf.reduce_sum(features["x"]))
        assert total.device.startswith("/job:ps")
        with tf.Session(worker.target) as sess:
            sess.run(total.initializer)
            sess.run(add)
            assert float(sess.run(add)) == float(x.sum())


def test_a_stage_graph_naming_a_pipeline_of_no_process_fails_to_register():
    service = TaskService({"worker": ["localhost:1"]}, "worker", 0)
    node = {"name": "it", "op": "OneShotIterator", "input": [], "device": "",
            "attr": {"output_types": [], "output_shapes": [], "shared_name": "it",
                     "container": "", "dataset_id": "shared_dataset_gone"}}
    with pytest.raises(errors.FailedPreconditionError,
                       match=r"'it' \(OneShotIterator\).*shared_dataset_gone.*tf.device"):
        service.RegisterGraph({"graph_def": {"node": [node]}}, {})


def test_log_device_placement_prints_each_node_task_and_device_once(cluster, capsys):
    _, worker = cluster
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(2.0, name="v")
        with tf.device("/job:worker/task:0"):
            y = tf.multiply(v, 3.0, name="y")
        config = tf.ConfigProto(log_device_placement=True)
        with tf.Session(worker.target, config=config) as sess:
            sess.run(v.initializer)
            assert sess.run(y) == 6.0
            assert sess.run(y) == 6.0
    lines = capsys.readouterr().out.splitlines()
    assert f"v: (VariableV2): {PS}/device:CPU:0" in lines
    assert f"v/Assign: (Assign): {PS}/device:CPU:0" in lines
    assert f"v/read: (Identity): {PS}/device:CPU:0" in lines
    assert f"y: (Mul): {WORKER}/device:CPU:0" in lines
    assert len(lines) == len(set(lines))  # once per node, not once per run
