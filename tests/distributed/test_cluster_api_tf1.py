"""The cluster API as TensorFlow 2.15's ``tf.compat.v1`` has it (each value below is what
TF printed for the same calls, through the tf-oracle): ``ClusterSpec`` with sparse jobs,
``as_cluster_def`` and construction from a ``ClusterDef``, TF's error types and words,
``Server.server_def`` as a ``ServerDef`` message, ``create_local_server``'s ``localhost``
job, ``Session.reset`` on a ``grpc://`` target and ``sess_str`` as bytes."""

import pytest

import flowgraph as tf
from flowgraph.distributed import Server


def test_cluster_spec_round_trips_through_its_cluster_def():
    c = tf.train.ClusterSpec({"ps": ["ps0:2222", "ps1:2222"],
                              "worker": {1: "w1:2222", 3: "w3:2222"}})
    assert (c.jobs, c.num_tasks("worker"), c.task_indices("worker")) == (
        ["ps", "worker"], 2, [1, 3])
    assert c.job_tasks("worker") == [None, "w1:2222", None, "w3:2222"]
    d = c.as_cluster_def()
    assert type(d).__name__ == "ClusterDef" and isinstance(d, tf.train.ClusterDef)
    assert str(d).split("\n")[:6] == ["job {", '  name: "ps"', "  tasks {", "    key: 0",
                                      '    value: "ps0:2222"', "  }"]
    assert tf.train.ClusterSpec(d).as_dict() == c.as_dict()
    assert tf.train.ClusterSpec(tf.train.ClusterDef.FromString(d.SerializeToString())) == c
    assert not tf.train.ClusterSpec({}) and c
    assert c != tf.train.ClusterSpec({"ps": ["a:1"]})


def test_cluster_spec_errors_use_tensorflows_types_and_words():
    c = tf.train.ClusterSpec({"worker": {1: "w1:2222"}})
    with pytest.raises(ValueError, match=r"^No task with index 2 in job 'worker'"):
        c.task_address("worker", 2)
    with pytest.raises(ValueError, match=r"^No such job in cluster: 'chief'"):
        c.num_tasks("chief")
    with pytest.raises(TypeError, match=r"^The tasks for job 'ps' must be a list or a "
                                        r"dictionary from integers to strings"):
        tf.train.ClusterSpec({"ps": "a:1"})
    with pytest.raises(TypeError, match=r"^`cluster` must be a dictionary mapping one or "
                                        r"more job names to lists of network addresses, "
                                        r"or a `ClusterDef` protocol buffer"):
        tf.train.ClusterSpec(["a:1"])


def test_server_def_is_a_server_def_message_and_servers_take_one():
    server = Server.create_local_server()
    try:
        sd = server.server_def
        assert isinstance(sd, tf.train.ServerDef)
        assert (sd.job_name, sd.task_index, sd.protocol) == ("localhost", 0, "grpc")
        assert tf.train.ClusterSpec(sd.cluster).jobs == ["localhost"]
        with tf.Graph().as_default():
            with tf.Session(server.target) as sess:
                names = [d.name for d in sess.list_devices()]
                assert names == ["/job:localhost/replica:0/task:0/device:CPU:0"]
                assert sess.sess_str == server.target.encode()
    finally:
        server.stop()
    again = Server(tf.train.ServerDef(
        cluster=tf.train.ClusterSpec({"w": ["localhost:0"]}).as_cluster_def(),
        job_name="w", task_index=0, protocol="grpc"))
    try:
        assert again.server_def.job_name == "w"
    finally:
        again.stop()


def test_session_reset_on_a_grpc_target_clears_the_tasks_variables():
    server = Server.create_local_server()
    try:
        with tf.Graph().as_default():
            y = tf.Variable([3.0, 4.0])
            with tf.Session(server.target) as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(y.assign_add([1.0, 2.0]))
            with tf.Session(server.target) as sess:  # state lives on the server
                assert sess.run(y).tolist() == [4.0, 6.0]
            tf.Session.reset(server.target)
            with tf.Session(server.target) as sess:
                with pytest.raises(tf.errors.FailedPreconditionError):
                    sess.run(y)
    finally:
        server.stop()


def test_a_replica_supervisor_needs_every_variable_placed(tmp_path):
    server = Server.create_local_server()
    try:
        with tf.Graph().as_default():
            gs = tf.train.get_or_create_global_step()
            w = tf.Variable(0.0, name="w")
            x = tf.placeholder(tf.float32, [])
            train = tf.train.GradientDescentOptimizer(0.1).minimize(
                tf.square(w - x), global_step=gs)
            init = tf.global_variables_initializer()
            sv = tf.train.Supervisor(is_chief=True, logdir=str(tmp_path), init_op=init,
                                     global_step=gs, save_model_secs=0,
                                     save_summaries_secs=0)
            with sv.managed_session(server.target) as sess:
                for _ in range(20):
                    _, step = sess.run([train, gs], {x: 3.0})
                assert (step, round(float(sess.run(w)), 4)) == (20, 2.9654)  # TF 2.15
            # TF: "When using replicas, all Variables must have their device set"
            with pytest.raises(ValueError, match="all Variables must have their device set"):
                tf.train.Supervisor(is_chief=False, logdir=str(tmp_path), init_op=init,
                                    global_step=gs)
        with tf.Graph().as_default(), tf.device("/job:localhost/task:0"):
            gs = tf.train.get_or_create_global_step()
            w = tf.Variable(0.0, name="w")
            sv = tf.train.Supervisor(is_chief=False, logdir=str(tmp_path), global_step=gs,
                                     save_model_secs=0, save_summaries_secs=0,
                                     recovery_wait_secs=0.1)
            sess = sv.prepare_or_wait_for_session(server.target)
            assert round(float(sess.run(w)), 4) == 2.9654 and sess.run(gs) == 20
            sv.stop()
    finally:
        server.stop()
