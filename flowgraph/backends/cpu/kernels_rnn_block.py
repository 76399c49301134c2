"""CPU kernels of the fused recurrent ops (ops/rnn_block_ops.py): ``LSTMBlockCell``,
``BlockLSTM(V2)``, ``GRUBlockCell`` and their gradient ops. Each step is a few NumPy
matrix products on the whole batch; the sequence ops loop over time only. float16
inputs are computed in float32, as TensorFlow's kernels do."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import dtypes as _dt
from flowgraph.framework import errors

_FLOATS = [_dt.float16, _dt.float32, _dt.float64]

# Where each gate's block sits in the 4 * cell_size columns of `w` and `b`.
_ICFO = {"i": 0, "ci": 1, "f": 2, "o": 3}  # BlockLSTM, LSTMBlockCell
_IFCO = {"i": 0, "f": 1, "ci": 2, "o": 3}  # BlockLSTMV2 (Keras's order)


def _bad(op_type: str, message: str):
    return errors.InvalidArgumentError(None, None, f"{op_type}: {message}")


def _work(*arrays):
    """The arrays in the dtype the kernel computes in (float32 for float16)."""
    dt = np.float32 if arrays[0].dtype == np.float16 else arrays[0].dtype
    return [np.asarray(a, dt) for a in arrays]


def _check_lstm(op_type, x, cs_prev, h_prev, w, wci, wcf, wco, b):
    batch, depth = x.shape
    if cs_prev.ndim != 2:
        raise _bad(op_type, f"cs_prev must be [batch_size, cell_size], got {list(cs_prev.shape)}")
    cell = cs_prev.shape[1]
    if b.shape != (4 * cell,):
        raise _bad(op_type, f"b must be [4 * cell_size] = [{4 * cell}], got {list(b.shape)}")
    for name, a in (("cs_prev", cs_prev), ("h_prev", h_prev)):
        if a.shape != (batch, cell):
            raise _bad(op_type, f"{name} must be [batch_size, cell_size] = [{batch}, {cell}], "
                       f"got {list(a.shape)}")
    if w.shape != (depth + cell, 4 * cell):
        raise _bad(op_type, f"w must be [input_size + cell_size, 4 * cell_size] = "
                   f"[{depth + cell}, {4 * cell}], got {list(w.shape)}")
    for name, a in (("wci", wci), ("wcf", wcf), ("wco", wco)):
        if a.shape != (cell,):
            raise _bad(op_type, f"{name} must be [cell_size] = [{cell}], got {list(a.shape)}")
    return cell


def _gates(z, cell, layout):
    return {g: z[:, k * cell:(k + 1) * cell] for g, k in layout.items()}


def _lstm_step(x, cs_prev, h_prev, w, wci, wcf, wco, b, forget_bias, cell_clip,
               use_peephole, layout):
    """(i, cs, f, o, ci, co, h) of one step."""
    cell = cs_prev.shape[1]
    z = _gates(np.concatenate([x, h_prev], 1) @ w + b, cell, layout)
    zi, zf, zo = z["i"], z["f"] + forget_bias, z["o"]
    if use_peephole:
        zi = zi + cs_prev * wci
        zf = zf + cs_prev * wcf
    i, f, ci = expit(zi), expit(zf), np.tanh(z["ci"])
    cs = ci * i + cs_prev * f
    if cell_clip > 0:
        cs = np.clip(cs, -cell_clip, cell_clip)
    if use_peephole:
        zo = zo + cs * wco
    o = expit(zo)
    co = np.tanh(cs)
    return i, cs, f, o, ci, co, co * o


def _lstm_bprop(cs_prev, wci, wcf, wco, i, cs, f, o, ci, co, cs_grad, h_grad,
                use_peephole, layout):
    """(cs_prev_grad, d_gates, wci_grad, wcf_grad, wco_grad) of one step; `d_gates` are
    the gradients of the gate pre-activations, in the order of `layout`."""
    d_o = o * (1 - o) * h_grad * co
    dcs = (1 - co * co) * h_grad * o + cs_grad
    if use_peephole:
        dcs = dcs + d_o * wco
    d = {"o": d_o, "ci": (1 - ci * ci) * dcs * i, "f": f * (1 - f) * dcs * cs_prev,
         "i": i * (1 - i) * dcs * ci}
    cs_prev_grad = dcs * f
    zero = np.zeros(cs.shape[1], cs.dtype)
    peeps = (zero, zero, zero)
    if use_peephole:
        cs_prev_grad = cs_prev_grad + d["i"] * wci + d["f"] * wcf
        peeps = ((d["i"] * cs_prev).sum(0), (d["f"] * cs_prev).sum(0), (d_o * cs).sum(0))
    gates = np.concatenate([d[g] for g in sorted(layout, key=layout.get)], 1)
    return cs_prev_grad, gates, *peeps


@cpu_kernel("LSTMBlockCell", dtypes=_FLOATS)
def lstm_block_cell(x, cs_prev, h_prev, w, wci, wcf, wco, b, *, forget_bias, cell_clip,
                    use_peephole):
    if x.ndim != 2:
        raise _bad("LSTMBlockCell", f"x must be [batch_size, input_size], got {list(x.shape)}")
    _check_lstm("LSTMBlockCell", x, cs_prev, h_prev, w, wci, wcf, wco, b)
    out = _lstm_step(*_work(x, cs_prev, h_prev, w, wci, wcf, wco, b), forget_bias,
                     cell_clip, use_peephole, _ICFO)
    return tuple(a.astype(x.dtype) for a in out)


@cpu_kernel("LSTMBlockCellGrad", dtypes=_FLOATS)
def lstm_block_cell_grad(x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co,
                         cs_grad, h_grad, *, use_peephole):
    if x.ndim != 2:
        raise _bad("LSTMBlockCellGrad", f"x must be [batch_size, input_size], got "
                   f"{list(x.shape)}")
    _check_lstm("LSTMBlockCellGrad", x, cs_prev, h_prev, w, wci, wcf, wco, b)
    vals = _work(cs_prev, wci, wcf, wco, i, cs, f, o, ci, co, cs_grad, h_grad)
    out = _lstm_bprop(*vals, use_peephole, _ICFO)
    return tuple(a.astype(x.dtype) for a in out)


def _block_lstm(op_type, seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b, forget_bias,
                cell_clip, use_peephole, layout):
    if x.ndim != 3:
        raise _bad(op_type, f"x must be [timelen, batch_size, input_size], got "
                   f"{list(x.shape)}")
    cell = _check_lstm(op_type, x[0], cs_prev, h_prev, w, wci, wcf, wco, b)
    steps = int(seq_len_max)
    if steps < 0 or steps > x.shape[0]:
        raise _bad(op_type, f"seq_len_max must be in [0, timelen = {x.shape[0]}], got {steps}")
    xs, c, h, w, wci, wcf, wco, b = _work(x, cs_prev, h_prev, w, wci, wcf, wco, b)
    outs = np.zeros((7, x.shape[0], x.shape[1], cell), xs.dtype)
    for t in range(steps):
        step = _lstm_step(xs[t], c, h, w, wci, wcf, wco, b, forget_bias, cell_clip,
                          use_peephole, layout)
        outs[:, t] = step
        c, h = step[1], step[6]
    return tuple(a.astype(x.dtype) for a in outs)


@cpu_kernel("BlockLSTM")  # dtype of x (input 0 is seq_len_max)
def block_lstm(seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b, *, forget_bias,
               cell_clip, use_peephole):
    return _block_lstm("BlockLSTM", seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b,
                       forget_bias, cell_clip, use_peephole, _ICFO)


@cpu_kernel("BlockLSTMV2")  # dtype of x (input 0 is seq_len_max)
def block_lstm_v2(seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b, *, cell_clip,
                  use_peephole):
    return _block_lstm("BlockLSTMV2", seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b,
                       0.0, cell_clip, use_peephole, _IFCO)


def _block_lstm_grad(op_type, seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs,
                     f, o, ci, co, h, cs_grad, h_grad, use_peephole, layout):
    """Backpropagation through time over the first `seq_len_max` steps."""
    if x.ndim != 3:
        raise _bad(op_type, f"x must be [timelen, batch_size, input_size], got "
                   f"{list(x.shape)}")
    _check_lstm(op_type, x[0], cs_prev, h_prev, w, wci, wcf, wco, b)
    steps = int(seq_len_max)
    if steps < 0 or steps > x.shape[0]:
        raise _bad(op_type, f"seq_len_max must be in [0, timelen = {x.shape[0]}], got {steps}")
    (xs, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co, h, cs_grad,
     h_grad) = _work(x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co, h,
                     cs_grad, h_grad)
    depth = x.shape[2]
    x_grad = np.zeros_like(xs)
    w_grad, b_grad = np.zeros_like(w), np.zeros_like(b)
    peeps = [np.zeros_like(wci), np.zeros_like(wcf), np.zeros_like(wco)]
    c_carry, h_carry = np.zeros_like(cs_prev), np.zeros_like(h_prev)
    for t in range(steps - 1, -1, -1):
        c_in = cs_prev if t == 0 else cs[t - 1]
        h_in = h_prev if t == 0 else h[t - 1]
        c_carry, d_gates, *p = _lstm_bprop(
            c_in, wci, wcf, wco, i[t], cs[t], f[t], o[t], ci[t], co[t],
            cs_grad[t] + c_carry, h_grad[t] + h_carry, use_peephole, layout)
        xh_grad = d_gates @ w.T
        x_grad[t] = xh_grad[:, :depth]
        h_carry = xh_grad[:, depth:]
        w_grad += np.concatenate([xs[t], h_in], 1).T @ d_gates
        b_grad += d_gates.sum(0)
        for acc, g in zip(peeps, p):
            acc += g
    out = (x_grad, c_carry, h_carry, w_grad, *peeps, b_grad)
    return tuple(a.astype(x.dtype) for a in out)


@cpu_kernel("BlockLSTMGrad")  # dtype of x (input 0 is seq_len_max)
def block_lstm_grad(*args, use_peephole):
    return _block_lstm_grad("BlockLSTMGrad", *args, use_peephole, _ICFO)


@cpu_kernel("BlockLSTMGradV2")  # dtype of x (input 0 is seq_len_max)
def block_lstm_grad_v2(*args, use_peephole):
    return _block_lstm_grad("BlockLSTMGradV2", *args, use_peephole, _IFCO)


def _check_gru(op_type, x, h_prev, w_ru, w_c, b_ru, b_c):
    if x.ndim != 2 or h_prev.ndim != 2:
        raise _bad(op_type, f"x and h_prev must be matrices, got shapes {list(x.shape)} and "
                   f"{list(h_prev.shape)}")
    batch, depth = x.shape
    cell = h_prev.shape[1]
    want = {"h_prev": (batch, cell), "w_ru": (depth + cell, 2 * cell),
            "w_c": (depth + cell, cell), "b_ru": (2 * cell,), "b_c": (cell,)}
    for (name, shape), a in zip(want.items(), (h_prev, w_ru, w_c, b_ru, b_c)):
        if a.shape != shape:
            raise _bad(op_type, f"{name} must have shape {list(shape)} (batch_size {batch}, "
                       f"input_size {depth}, cell_size {cell}), got {list(a.shape)}")
    return cell


@cpu_kernel("GRUBlockCell", dtypes=[_dt.float32, _dt.float64])
def gru_block_cell(x, h_prev, w_ru, w_c, b_ru, b_c):
    cell = _check_gru("GRUBlockCell", x, h_prev, w_ru, w_c, b_ru, b_c)
    ru = expit(np.concatenate([x, h_prev], 1) @ w_ru + b_ru)
    r, u = ru[:, :cell], ru[:, cell:]
    c = np.tanh(np.concatenate([x, r * h_prev], 1) @ w_c + b_c)
    return r, u, c, u * h_prev + (1 - u) * c


@cpu_kernel("GRUBlockCellGrad", dtypes=[_dt.float32, _dt.float64])
def gru_block_cell_grad(x, h_prev, w_ru, w_c, b_ru, b_c, r, u, c, d_h):
    _check_gru("GRUBlockCellGrad", x, h_prev, w_ru, w_c, b_ru, b_c)
    depth = x.shape[1]
    d_c_bar = d_h * (1 - u) * (1 - c * c)
    d_u_bar = d_h * (h_prev - c) * u * (1 - u)
    d_xhr = d_c_bar @ w_c.T  # gradient of [x, r * h_prev]
    d_hr = d_xhr[:, depth:]
    d_r_bar = d_hr * h_prev * r * (1 - r)
    d_r_bar_u_bar = np.concatenate([d_r_bar, d_u_bar], 1)
    d_xh = d_r_bar_u_bar @ w_ru.T  # gradient of [x, h_prev] through the gates
    d_x = d_xh[:, :depth] + d_xhr[:, :depth]
    d_h_prev = d_xh[:, depth:] + d_hr * r + d_h * u
    return d_x, d_h_prev, d_c_bar, d_r_bar_u_bar
