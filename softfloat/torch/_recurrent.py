"""torch's recurrent kernels (``torch.lstm``, ``torch.gru``, ``torch.rnn_tanh``,
``torch.rnn_relu``: nn.LSTM, nn.GRU, nn.RNN) written out in torch calls, so that their
matrix products reach the emulation (torch's own kernels compute them inside, out of
reach).

Per layer and direction, as cuDNN organises the work: the input projection of every
time step is one product (``F.linear(x, w_ih, b_ih)`` over the whole sequence), then
each step's recurrent product ``F.linear(h, w_hh, b_hh)``, then the gates in the
tensors' dtype (PyTorch's gate order and equations, see nn.LSTM / nn.GRU / nn.RNN,
computed operation for operation as ATen's CPU cells compute them, so that with exact
products the bits are torch's: the GRU's h' = (h - n) * z + n; torch's CPU nn.LSTM runs
oneDNN where it is enabled, whose gate arithmetic differs in the last bits, and which
torch.autocast runs whole in its dtype: the written-out LSTM's inputs are cast alike);
LSTM's projection (``proj_size``) is ``F.linear(h, w_hr)``.  Between layers the output
goes through ``F.dropout`` when training with ``dropout`` (torch draws its own masks
inside its kernel: the same distribution, other draws).  The caller runs this with the
emulation active; products are emulated, everything else is ordinary torch arithmetic.

Packed sequences (the ``batch_sizes`` overloads: nn.LSTM/GRU/RNN of a PackedSequence)
are written out as ATen's packed layers run them: the input projection of the whole packed
data at once, then per time step the leading ``batch_sizes[t]`` sequences (sorted by
length, longest first); forward, a sequence that has ended leaves its final state behind;
in reverse, the states of the sequences that start join in from ``hx`` (:func:`_packed`).

The cells (``torch.lstm_cell``, ``gru_cell``, ``rnn_tanh_cell``, ``rnn_relu_cell``:
nn.LSTMCell, nn.GRUCell, nn.RNNCell) are one step of the same: ``F.linear(x, w_ih,
b_ih)``, then ``F.linear(h, w_hh, b_hh)``, then the same gates (:func:`cell`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ._autocast import lowered

__all__ = ["CELLS", "KINDS", "cell", "run"]

#: torch function -> (kind, gates per hidden unit)
KINDS = {torch.lstm: ("lstm", 4), torch.gru: ("gru", 3), torch.rnn_tanh: ("tanh", 1),
         torch.rnn_relu: ("relu", 1)}


#: torch's cell functions -> kind
CELLS = {torch.lstm_cell: "lstm", torch.gru_cell: "gru", torch.rnn_tanh_cell: "tanh",
         torch.rnn_relu_cell: "relu"}
_CELL_ARGS = ("input", "hx", "w_ih", "w_hh", "b_ih", "b_hh")


def cell(func, args, kwargs):
    """One step of a cell function of :data:`CELLS` written out: the input's product,
    the hidden state's, then the layer's gates (LSTM: (h', c'); the others: h')."""
    bound = dict(zip(_CELL_ARGS, args), **kwargs)
    kind = CELLS[func]
    x, hx = bound["input"], bound["hx"]
    h, c = (hx[0], hx[1]) if kind == "lstm" else (hx, None)
    projected = F.linear(x, bound["w_ih"], bound.get("b_ih"))
    recurrent = F.linear(h, bound["w_hh"], bound.get("b_hh"))
    h, c = _step(kind, projected, recurrent, h, c)
    return (h, c) if kind == "lstm" else h


def run(func, args, kwargs):
    """``func(*args, **kwargs)`` written out (see the module docstring), or None for
    the calls it does not write out."""
    kind, _ = KINDS[func]
    if kwargs or len(args) != 9:
        return None
    # the dense overload: (input, hx, params, ...); the packed one: (data, batch_sizes, hx, params, ...)
    dense = isinstance(args[1], (tuple, list)) if kind == "lstm" else isinstance(args[2], (tuple, list))
    if not dense:
        return _packed(kind, args)
    x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = args
    lower = lowered("lstm", x.device) if kind == "lstm" else None
    if lower is not None:  # inside torch.autocast, where torch runs the whole LSTM in its dtype
        x, hx, params = (_cast(v, lower) for v in (x, hx, params))
    if kind == "lstm":
        h0, c0 = hx
    else:
        h0, c0 = hx, None
    if batch_first:
        x = x.transpose(0, 1)
    if x.shape[0] == 0:  # torch's own rule (its kernel raises it)
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")

    def direction(x, weights, h, c, reverse):
        out, h, c = _direction(kind, x.flip(0) if reverse else x, weights, h, c)
        return (out.flip(0) if reverse else out), h, c
    out, *states = _layers(kind, x, (h0, c0), params, (has_biases, num_layers, dropout, train, bidirectional),
                           direction)
    return (out.transpose(0, 1) if batch_first else out, *states)


def _cast(value, dtype):
    """``value`` (a tensor, or a tuple or list of them) with its float tensors cast to ``dtype``."""
    if isinstance(value, (tuple, list)):
        return type(value)(_cast(v, dtype) for v in value)
    return value.to(dtype) if value.dtype.is_floating_point else value


def _packed(kind, args):
    """A packed sequence's ``func(data, batch_sizes, hx, params, ...)`` written out:
    (output data, h_n[, c_n]), the steps as ATen's PackedLayer and ReversedPackedLayer
    take them (see the module docstring)."""
    data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = args
    sizes = [int(n) for n in batch_sizes]
    h0, c0 = hx if kind == "lstm" else (hx, None)

    def direction(x, weights, h, c, reverse):
        return _packed_direction(kind, x, sizes, weights, (h, c), reverse)
    return _layers(kind, data, (h0, c0), params, (has_biases, num_layers, dropout, train, bidirectional),
                   direction)


def _layers(kind, x, state, params, options, direction):
    """Every layer and direction over ``x`` (the sequence's first axis time, or packed
    data), ``direction(x, weights, h, c, reverse)`` running one: (output, h_n[, c_n])."""
    h0, c0 = state
    has_biases, num_layers, dropout, train, bidirectional = options
    directions = 2 if bidirectional else 1
    per = len(params) // (num_layers * directions)
    h_n, c_n = [], []
    for layer in range(num_layers):
        outputs = []
        for d in range(directions):
            i = layer * directions + d
            weights = params[i * per:(i + 1) * per]
            w_ih, w_hh = weights[0], weights[1]
            b_ih, b_hh = (weights[2], weights[3]) if has_biases else (None, None)
            w_hr = weights[-1] if per in (3, 5) else None
            out, h, c = direction(x, (w_ih, w_hh, b_ih, b_hh, w_hr), h0[i], None if c0 is None else c0[i], d == 1)
            outputs.append(out)
            h_n.append(h)
            c_n.append(c)
        x = torch.cat(outputs, dim=-1) if directions == 2 else outputs[0]
        if dropout and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, training=True)
    if kind == "lstm":
        return x, torch.stack(h_n), torch.stack(c_n)
    return x, torch.stack(h_n)


def _packed_direction(kind, data, sizes, weights, state, reverse):
    """One layer in one direction over packed ``data`` (time steps of ``sizes[t]`` rows
    each): (output data, h, c) with the final states of every sequence, as ATen's
    PackedLayer (forward) and ReversedPackedLayer (reverse) compute them."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    h0, c0 = state
    projected = F.linear(data, w_ih, b_ih)  # every step's input product at once
    starts = [0]
    for n in sizes:
        starts.append(starts[-1] + n)
    steps = range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes))
    last = sizes[-1] if reverse else sizes[0]
    h, c = h0[:last], None if c0 is None else c0[:last]
    ended, outputs = [], []
    for t in steps:
        n = sizes[t]
        if reverse and n > last:  # sequences that start here: their states from hx
            h = torch.cat([h, h0[last:n]])
            c = None if c is None else torch.cat([c, c0[last:n]])
        elif not reverse and n < last:  # sequences that ended: their final states
            ended.append((h[n:], None if c is None else c[n:]))
            h, c = h[:n], None if c is None else c[:n]
        last = n
        h, c = _step(kind, projected[starts[t]:starts[t + 1]], F.linear(h, w_hh, b_hh), h, c)
        if w_hr is not None:
            h = F.linear(h, w_hr)
        outputs.append(h)
    if reverse:
        outputs.reverse()
    else:
        ended.append((h, c))
        ended.reverse()  # the longest sequences first, as the batch is sorted
        h = torch.cat([e[0] for e in ended])
        c = None if c is None else torch.cat([e[1] for e in ended])
    return torch.cat(outputs), h, c  # (a packed sequence has a step at least)


def _direction(kind, x, weights, h, c):
    """One layer in one direction over the (T, N, I) sequence ``x``: (outputs, h, c)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    projected = F.linear(x, w_ih, b_ih)  # every time step's input product at once
    outputs = []
    for t in range(x.shape[0]):
        h, c = _step(kind, projected[t], F.linear(h, w_hh, b_hh), h, c)
        if w_hr is not None:
            h = F.linear(h, w_hr)
        outputs.append(h)
    stacked = torch.stack(outputs) if outputs else x.new_zeros(0, *h.shape)
    return stacked, h, c


def _step(kind, projected, recurrent, h, c):
    """The gates of one step from its two products (PyTorch's equations): (h', c')."""
    if kind == "lstm":
        i, f, g, o = (projected + recurrent).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c
    if kind == "gru":
        # ATen's GRUCell, operation for operation: torch's sigmoid takes another code path
        # (other bits) on a contiguous block than on one gate's columns, so r and z are
        # taken from the columns of the summed (r, z) gates, as ATen's in-place sigmoid_
        # on each chunk does; h' = (h - n) * z + n, ATen's order of the documented
        # (1 - z) * n + z * h (which differs in the last bit)
        size = projected.shape[-1] // 3
        rz = recurrent[..., :2 * size] + projected[..., :2 * size]
        r, z = torch.sigmoid(rz[..., :size]), torch.sigmoid(rz[..., size:])
        n = torch.tanh(projected[..., 2 * size:] + recurrent[..., 2 * size:] * r)
        return (h - n) * z + n, c
    pre = projected + recurrent
    return (torch.tanh(pre) if kind == "tanh" else torch.relu(pre)), c
