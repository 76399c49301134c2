"""Generate the raw_rnn GraphDef fixture under TensorFlow (run it with the tf-oracle's
Python: ``/tmp/tf-oracle-venv/bin/python tests/data/tf_formats/raw_rnn/make_raw_rnn.py``).

A TF1-style sequence model over ``x [time=4, batch=2, depth=3]`` with the fused recurrent
ops of ``tf.contrib.rnn`` and their gradients, as a TF 1.x training graph held them:

    x -> BlockLSTM (peepholes)          -> h_seq   \
    x -> LSTMBlockCell x 4 (unrolled)   -> h_cell   > loss = sum of squares -> tf.gradients
    x -> GRUBlockCell x 4 (unrolled)    -> h_gru   /
    x -> BlockLSTMV2                    -> h_v2   /

TensorFlow 2.15 registers the gradient of BlockLSTM(V2) (BlockLSTMGrad(V2) ops); the
gradients of LSTMBlockCell and GRUBlockCell lived in TF 1.x's contrib, which 2.15 no
longer has, so this script registers the same construction (LSTMBlockCellGrad /
GRUBlockCellGrad plus the weight products) before calling tf.gradients.
Writes ``graph.pb`` (GraphDef bytes) and ``expected.npz`` (the feed and TF's outputs).
"""

import os

import numpy as np
import tensorflow.compat.v1 as tf
from tensorflow.python.framework import ops

tf.disable_v2_behavior()
HERE = os.path.dirname(os.path.abspath(__file__))
R = np.random.RandomState(23)
T, B, D, N = 4, 2, 3, 2


@ops.RegisterGradient("LSTMBlockCell")
def _lstm_block_cell_grad(op, *grad):
    x, cs_prev, h_prev, w, wci, wcf, wco, b = op.inputs
    i, cs, f, o, ci, co, _ = op.outputs
    cs_prev_grad, dicfo, wci_grad, wcf_grad, wco_grad = tf.raw_ops.LSTMBlockCellGrad(
        x=x, cs_prev=cs_prev, h_prev=h_prev, w=w, wci=wci, wcf=wcf, wco=wco, b=b, i=i, cs=cs,
        f=f, o=o, ci=ci, co=co, cs_grad=grad[1], h_grad=grad[6],
        use_peephole=op.get_attr("use_peephole"))
    xh_grad = tf.matmul(dicfo, w, transpose_b=True)
    x_grad, h_prev_grad = xh_grad[:, :D], xh_grad[:, D:]
    w_grad = tf.matmul(tf.concat([x, h_prev], 1), dicfo, transpose_a=True)
    b_grad = tf.raw_ops.BiasAddGrad(out_backprop=dicfo)
    return x_grad, cs_prev_grad, h_prev_grad, w_grad, wci_grad, wcf_grad, wco_grad, b_grad


@ops.RegisterGradient("GRUBlockCell")
def _gru_block_cell_grad(op, *grad):
    x, h_prev, w_ru, w_c, b_ru, b_c = op.inputs
    r, u, c, _ = op.outputs
    d_x, d_h_prev, d_c_bar, d_r_bar_u_bar = tf.raw_ops.GRUBlockCellGrad(
        x=x, h_prev=h_prev, w_ru=w_ru, w_c=w_c, b_ru=b_ru, b_c=b_c, r=r, u=u, c=c, d_h=grad[3])
    d_w_ru = tf.matmul(tf.concat([x, h_prev], 1), d_r_bar_u_bar, transpose_a=True)
    d_w_c = tf.matmul(tf.concat([x, h_prev * r], 1), d_c_bar, transpose_a=True)
    return (d_x, d_h_prev, d_w_ru, d_w_c, tf.raw_ops.BiasAddGrad(out_backprop=d_r_bar_u_bar),
            tf.raw_ops.BiasAddGrad(out_backprop=d_c_bar))


def _const(name, *shape, scale=0.5):
    return tf.constant((R.standard_normal(shape) * scale).astype(np.float32), name=name)


def build():
    x = tf.placeholder(tf.float32, [T, B, D], name="x")
    h0 = tf.placeholder(tf.float32, [B, N], name="h0")
    c0 = tf.zeros([B, N], name="c0")
    with tf.name_scope("fused"):
        w, b = _const("w", D + N, 4 * N), _const("b", 4 * N)
        wci, wcf, wco = _const("wci", N), _const("wcf", N), _const("wco", N)
        seq = tf.constant(T, tf.int64, name="seq_len_max")
        out = tf.raw_ops.BlockLSTM(seq_len_max=seq, x=x, cs_prev=c0, h_prev=h0, w=w, wci=wci,
                                   wcf=wcf, wco=wco, b=b, forget_bias=1.0, cell_clip=-1.0,
                                   use_peephole=True, name="BlockLSTM")
        h_seq = tf.identity(out.h, name="h")
    with tf.name_scope("v2"):
        w2, b2 = _const("w", D + N, 4 * N), _const("b", 4 * N)
        z = tf.zeros([N], name="zeros")
        out2 = tf.raw_ops.BlockLSTMV2(seq_len_max=tf.constant(T - 1, tf.int64), x=x, cs_prev=c0,
                                      h_prev=h0, w=w2, wci=z, wcf=z, wco=z, b=b2,
                                      name="BlockLSTMV2")
        h_v2 = tf.identity(out2.h[:T - 1], name="h")
    with tf.variable_scope("cell"):
        w3, b3 = _const("w", D + N, 4 * N), _const("b", 4 * N)
        p = [_const(n, N) for n in ("wci", "wcf", "wco")]
        c, h, hs = c0, h0, []
        for t in range(T):
            step = tf.raw_ops.LSTMBlockCell(x=x[t], cs_prev=c, h_prev=h, w=w3, wci=p[0],
                                            wcf=p[1], wco=p[2], b=b3, forget_bias=0.5,
                                            cell_clip=3.0, use_peephole=t % 2 == 0)
            c, h = step.cs, step.h
            hs.append(h)
        h_cell = tf.stack(hs, name="h")
    with tf.variable_scope("gru"):
        wru, wc = _const("w_ru", D + N, 2 * N), _const("w_c", D + N, N)
        bru, bc = _const("b_ru", 2 * N), _const("b_c", N)
        h, hs = h0, []
        for t in range(T):
            h = tf.raw_ops.GRUBlockCell(x=x[t], h_prev=h, w_ru=wru, w_c=wc, b_ru=bru, b_c=bc).h
            hs.append(h)
        h_gru = tf.stack(hs, name="h")
    loss = tf.add_n([tf.reduce_sum(tf.square(t)) for t in (h_seq, h_v2, h_cell, h_gru)],
                    name="loss")
    wrt = [x, h0, w, b, wci, wcf, wco, w2, b2, w3, b3, *p, wru, wc, bru, bc]
    grads = tf.gradients(loss, wrt)
    names = ["x", "h0", "fused_w", "fused_b", "fused_wci", "fused_wcf", "fused_wco", "v2_w",
             "v2_b", "cell_w", "cell_b", "cell_wci", "cell_wcf", "cell_wco", "gru_w_ru",
             "gru_w_c", "gru_b_ru", "gru_b_c"]
    for n, g in zip(names, grads):
        tf.identity(g, name=f"grad/{n}")
    return tf.get_default_graph().as_graph_def(), names


def main():
    with tf.Graph().as_default() as g:
        gdef, names = build()
        types = sorted({op.type for op in g.get_operations()})
        print("op types:", types)
        feed = {"x:0": R.standard_normal((T, B, D)).astype(np.float32),
                "h0:0": (R.standard_normal((B, N)) * 0.3).astype(np.float32)}
        fetches = ["fused/h:0", "v2/h:0", "cell/h:0", "gru/h:0", "loss:0"] + [
            f"grad/{n}:0" for n in names]
        with tf.Session() as sess:
            values = sess.run(fetches, {g.get_tensor_by_name(k): v for k, v in feed.items()})
    with open(os.path.join(HERE, "graph.pb"), "wb") as f:
        f.write(gdef.SerializeToString())
    np.savez(os.path.join(HERE, "expected.npz"), feed_x=feed["x:0"], feed_h0=feed["h0:0"],
             fetches=np.array(fetches), **{f"out{k}": v for k, v in enumerate(values)})
    print("wrote", len(fetches), "fetches; loss", values[4])


if __name__ == "__main__":
    main()
