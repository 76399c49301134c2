"""Resource variables (``VarHandleOp``) on a ps task, trained by two workers over
``grpc://`` sessions: every op taking a handle runs on the handle's task, and the
numbers are those of reference variables."""

import numpy as np
from conftest import free_port

import flowgraph as tf
from flowgraph.distributed import ClusterSpec, replica_device_setter


def _cluster(**jobs):
    return ClusterSpec({job: [f"localhost:{free_port()}" for _ in range(n)]
                        for job, n in jobs.items()})


def _model(cluster, task, use_resource):
    graph = tf.Graph()
    with graph.as_default(), tf.device(replica_device_setter(
            worker_device=f"/job:worker/task:{task}", cluster=cluster)):
        step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 2])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer(),
                            use_resource=use_resource)
        emb = tf.get_variable("emb", initializer=tf.constant([[1.0], [2.0], [3.0]]),
                              use_resource=use_resource)
        pred = tf.matmul(x, w) + tf.reduce_sum(tf.nn.embedding_lookup(emb, [0, 2]))
        loss = tf.reduce_mean(tf.square(pred - y))
        train = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=step)
        init = tf.global_variables_initializer()
    return graph, x, y, train, init, step, w, emb


def _train(servers, use_resource):
    cluster = _cluster(ps=1, worker=2)
    servers(cluster, "ps", 0)
    workers = [servers(cluster, "worker", i) for i in range(2)]
    xs = np.random.RandomState(0).randn(16, 2).astype(np.float32)
    ys = xs @ np.array([[2.0], [-1.0]], np.float32)
    models = [_model(cluster, i, use_resource) for i in range(2)]
    sessions = [tf.Session(w.target, graph=m[0]) for w, m in zip(workers, models)]
    try:
        sessions[0].run(models[0][4])
        for _ in range(5):  # the workers take turns on the ps's variables
            for sess, (_, x, y, train, *_rest) in zip(sessions, models):
                sess.run(train, {x: xs, y: ys})
        _, _, _, _, _, step, w, emb = models[1]
        assert type(w).__name__ == ("ResourceVariable" if use_resource else "Variable")
        assert w.op.device == "/job:ps/task:0"
        return sessions[1].run([step, w, emb])
    finally:
        for sess in sessions:
            sess.close()


def test_two_workers_train_resource_variables_on_the_ps(servers):
    step, w, emb = _train(servers, True)
    ref_step, ref_w, ref_emb = _train(servers, False)
    assert step == ref_step == 10
    assert w.tobytes() == ref_w.tobytes() and emb.tobytes() == ref_emb.tobytes()
    assert emb[1, 0] == 2.0  # the row no lookup reads keeps its value
