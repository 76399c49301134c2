"""A task runs a light stage inline and a GEMM-heavy one on every core
(`flowgraph.distributed.stage_cost`), unless the server's config chose the threads."""

import numpy as np
from conftest import free_port

import flowgraph as tf
from flowgraph.distributed import Server
from flowgraph.distributed.stage_cost import (
    HEAVY_STAGE_FLOPS,
    stage_flops,
    threads_for_stage,
    usable_cores,
)


def _mlp_flops(layers, batch):
    """The flops the cost model gives a training step of an MLP fed a batch."""
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, layers[0]])
        y = tf.placeholder(tf.int64, [None])
        net = x
        for i, units in enumerate(layers[1:]):
            net = tf.layers.dense(net, units,
                                  activation=tf.nn.relu if i < len(layers) - 2 else None)
        loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=net)
        tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return stage_flops(g.get_operations(), [(batch, layers[0]), (batch,)])


def test_the_small_mlp_step_is_light_and_the_heavy_one_heavy():
    small = _mlp_flops([64, 128, 64, 10], 64)
    heavy = _mlp_flops([784, 1024, 1024, 10], 256)
    forward = 2 * 64 * (64 * 128 + 128 * 64 + 64 * 10)
    assert 2 * forward <= small <= 3 * forward  # forward + backward products
    assert small < HEAVY_STAGE_FLOPS <= heavy
    assert threads_for_stage(small, share=1, pinned=False, cores=2) == 1
    assert threads_for_stage(heavy, share=1, pinned=False, cores=2) == 2
    assert threads_for_stage(heavy, share=4, pinned=False, cores=2) == 4  # never fewer
    assert threads_for_stage(small, share=0, pinned=False, cores=16) == 1
    for flops in (small, heavy):  # the server's config decides
        assert threads_for_stage(flops, share=3, pinned=True, cores=2) == 3


def test_the_unknown_batch_dimension_is_the_first_feeds():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 100])
        tf.matmul(x, tf.ones([100, 50]))
    assert stage_flops(g.get_operations(), [(8, 100)]) == 2 * 8 * 100 * 50
    assert stage_flops(g.get_operations(), []) == 2 * 1 * 100 * 50


def _stage_threads(server, build):
    """Run `build()`'s (fetch, feeds) on `server`; the threads its stage got, and whether
    its session has a pool."""
    with tf.Graph().as_default():
        fetch, feeds = build()
        with tf.Session(server.target) as sess:
            sess.run(fetch, feeds)
            (stage,) = server._service._graphs.values()
            return stage.threads, stage._sessions[0]._pool is not None


def test_a_task_picks_each_stages_threads_on_its_first_call(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the launcher's share: 1 core
    server = Server({"local": [f"localhost:{free_port()}"]}, "local", 0)

    def light():
        return tf.constant(2.0) * 3.0, None

    def heavy():
        x = tf.placeholder(tf.float32, [None, 1024])
        product = tf.matmul(tf.matmul(x, tf.ones([1024, 1024])), tf.ones([1024, 8]))
        return tf.reduce_sum(product), {x: np.ones((256, 1024), np.float32)}

    try:
        assert _stage_threads(server, light) == (1, False)  # inline on the caller
        threads, pool = _stage_threads(server, heavy)
        assert threads == max(1, usable_cores()) and pool == (threads > 1)
    finally:
        server.stop()
    pinned = Server({"local": [f"localhost:{free_port()}"]}, "local", 0,
                    config=tf.ConfigProto(inter_op_parallelism_threads=1))
    try:
        assert _stage_threads(pinned, heavy) == (1, False)
    finally:
        pinned.stop()
