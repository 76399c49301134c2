"""tf.train.SessionManager and the session creators: restore or initialize, local init,
readiness checks, waiting for another task."""

import doctest

import pytest

import flowgraph as tf
from flowgraph.train import session_manager


def _save(sess, saver, directory, step=1):
    return saver.save(sess, str(directory / "model.ckpt"), global_step=step)


def _manager(**kwargs):
    return tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(), **kwargs)


def test_prepare_session_initializes_without_checkpoint(tmp_path):
    v = tf.Variable(3.0, name="v")
    sm = _manager()
    saver = tf.train.Saver()
    with sm.prepare_session("", init_op=tf.global_variables_initializer(), saver=saver,
                            checkpoint_dir=str(tmp_path)) as sess:
        assert sess.run(v) == 3.0


def test_prepare_session_restores_latest_checkpoint(tmp_path):
    v = tf.Variable(3.0, name="v")
    bump = v.assign(42.0)
    init = tf.global_variables_initializer()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(init)
        sess.run(bump)
        path = _save(sess, saver, tmp_path)
    sm = _manager()
    ran_init_fn = []
    with sm.prepare_session("", init_op=init, saver=saver, checkpoint_dir=str(tmp_path),
                            init_fn=ran_init_fn.append) as sess:
        assert sess.run(v) == 42.0  # restored, not re-initialized
    assert ran_init_fn == []
    assert saver.last_checkpoints == [path]
    with sm.prepare_session("", init_op=init, saver=saver,
                            checkpoint_filename_with_path=path) as sess:
        assert sess.run(v) == 42.0
    with pytest.raises(ValueError, match="Can not provide both checkpoint_dir and"):
        sm.prepare_session("", init_op=init, saver=saver, checkpoint_dir=str(tmp_path),
                           checkpoint_filename_with_path=path)


def test_prepare_session_init_fn_and_feed():
    v = tf.Variable(1.0)
    start = tf.placeholder(tf.float32, [])
    set_v = v.assign(start)
    calls = []

    def init_fn(sess):
        calls.append(sess)
        sess.run(set_v, feed_dict={start: 9.0})

    sm = _manager()
    with sm.prepare_session("", init_fn=init_fn) as sess:
        assert sess.run(v) == 9.0 and calls == [sess]
    w = tf.Variable(tf.zeros([2]), validate_shape=False)
    fed_init = w.initializer
    value = next(t for t in fed_init.inputs if t.op.type != "VariableV2")
    only_w = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables([w]))
    with only_w.prepare_session("", init_op=fed_init,
                                init_feed_dict={value: [5.0, 6.0]}) as sess:
        assert sess.run(w).tolist() == [5.0, 6.0]


def test_prepare_session_names_uninitialized_variables():
    a = tf.Variable(1.0, name="a")
    tf.Variable(2.0, name="b")
    tf.Variable(3.0, name="c")
    sm = _manager()
    with pytest.raises(RuntimeError, match=r"Init operations did not make model ready.*"
                                            r"Variables not initialized: b, c"):
        sm.prepare_session("", init_op=a.initializer)


def test_prepare_session_needs_something_to_initialize():
    tf.Variable(1.0)
    with pytest.raises(RuntimeError, match="no init_op or init_fn or local_init_op"):
        _manager().prepare_session("")


def test_local_init_op_runs_after_global_variables_are_ready(tmp_path):
    g = tf.Variable(4.0, name="g")
    local = tf.Variable(0.0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    with tf.control_dependencies([local.initializer]):
        copy = local.assign(g * 2.0)
    sm = tf.train.SessionManager(
        ready_op=tf.report_uninitialized_variables(),
        ready_for_local_init_op=tf.report_uninitialized_variables(tf.global_variables()),
        local_init_op=copy.op)
    with sm.prepare_session("", init_op=g.initializer) as sess:
        assert sess.run(local) == 8.0
    with pytest.raises(RuntimeError, match=r"did not make model ready for local_init.*"
                                            r"Variables not initialized: g"):
        sm.prepare_session("", init_op=tf.no_op())
    with pytest.raises(ValueError, match="you must also pass a local_init_op"):
        tf.train.SessionManager(ready_for_local_init_op=tf.report_uninitialized_variables())


def test_recover_session(tmp_path):
    v = tf.Variable(3.0, name="v")
    init = tf.global_variables_initializer()
    saver = tf.train.Saver()
    sm = _manager()
    sess, restored = sm.recover_session("", saver=saver, checkpoint_dir=str(tmp_path))
    assert not restored
    sess.run(init)
    _save(sess, saver, tmp_path)
    sess.close()
    sess, restored = sm.recover_session("", saver=saver, checkpoint_dir=str(tmp_path))
    assert restored and sess.run(v) == 3.0
    sess.close()
    sess, restored = sm.recover_session("", saver=saver, checkpoint_dir=str(tmp_path / "none"),
                                        wait_for_checkpoint=True, max_wait_secs=0)
    assert not restored
    sess.close()


def test_recover_session_reports_not_ready_after_partial_restore(tmp_path):
    a = tf.Variable(1.0, name="a")
    tf.Variable(2.0, name="b")
    saver_a = tf.train.Saver([a])
    with tf.Session() as sess:
        sess.run(a.initializer)
        _save(sess, saver_a, tmp_path)
    sess, restored = _manager().recover_session("", saver=saver_a,
                                                checkpoint_dir=str(tmp_path))
    assert not restored  # b is still uninitialized
    sess.close()


def test_wait_for_session_until_another_task_initialized():
    target = "local://session_manager_test"
    v = tf.Variable(2.5)
    try:
        sm = _manager(recovery_wait_secs=0.01)
        with pytest.raises(tf.errors.DeadlineExceededError,
                           match="Session was not ready after waiting"):
            sm.wait_for_session(target, max_wait_secs=0.05)
        chief = sm.prepare_session(target, init_op=tf.global_variables_initializer())
        worker = sm.wait_for_session(target, max_wait_secs=1)
        assert worker.run(v) == 2.5
        worker.close()
        chief.close()
    finally:
        tf.Session.reset(target)


def test_chief_and_worker_session_creators(tmp_path):
    v = tf.Variable(6.0)
    target = "local://creator_test"
    try:
        chief = tf.train.ChiefSessionCreator(master=target, checkpoint_dir=str(tmp_path))
        sess = chief.create_session()
        assert sess.run(v) == 6.0
        assert tf.get_default_graph().finalized
        worker = tf.train.WorkerSessionCreator(master=target, max_wait_secs=1)
        other = worker.create_session()
        assert other.run(v) == 6.0
        other.close()
        sess.close()
    finally:
        tf.get_default_graph()._unsafe_unfinalize()
        tf.Session.reset(target)
    with pytest.raises(NotImplementedError):
        tf.train.SessionCreator().create_session()


def test_docstring_examples():
    result = doctest.testmod(session_manager, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
