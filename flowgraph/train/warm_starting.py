"""``tf.train.warm_start``: initialize some variables of a new model from a checkpoint,
optionally remapping embedding rows (or columns) to a new vocabulary (`VocabInfo`).

The chosen variables' initializers are replaced by ones that read the checkpoint
(`tf.train.init_from_checkpoint`), so nothing is read until the variables are
initialized. A variable with a `VocabInfo` is remapped when `warm_start` is called: row
``i`` of the new variable takes the checkpoint's row for the word on line ``i`` of the
new vocabulary file, when the old vocabulary has it; new words and OOV buckets take the
backup initializer's values (zeros by default). `flowgraph.estimators` calls this for
``Estimator(warm_start_from=...)``.

Example
-------
>>> VocabInfo("new_vocab.txt", 3, 1, "old_vocab.txt").axis
0
"""

from __future__ import annotations

import collections
import logging
import re

import numpy as np

__all__ = ["VocabInfo", "warm_start"]

logger = logging.getLogger("tensorflow")


class VocabInfo(collections.namedtuple("VocabInfo", [
        "new_vocab", "new_vocab_size", "num_oov_buckets", "old_vocab", "old_vocab_size",
        "backup_initializer", "axis"])):
    """How to remap one warm-started variable from an old vocabulary to a new one.

    Parameters
    ----------
    new_vocab, old_vocab : str
        Vocabulary files, one word per line.
    new_vocab_size : int
        Words of `new_vocab` used (its first lines).
    num_oov_buckets : int
        Out-of-vocabulary rows after the words (initialized by `backup_initializer`).
    old_vocab_size : int, default -1
        Words of `old_vocab` the checkpoint has rows for (-1: all lines).
    backup_initializer : initializer, optional
        For rows of new words and OOV buckets; zeros when None.
    axis : {0, 1}
        0 remaps rows (an embedding), 1 columns (an output layer's kernel).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.train.VocabInfo("new.txt", new_vocab_size=3, num_oov_buckets=1,
    ...                    old_vocab="old.txt").old_vocab_size
    -1
    """

    __slots__ = ()

    def __new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab, old_vocab_size=-1,
                backup_initializer=None, axis=0):
        if axis not in (0, 1):
            raise ValueError("The only supported values for the axis argument are 0 and 1.  "
                             f"Provided axis: {axis}")
        return super().__new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab,
                               old_vocab_size, backup_initializer, axis)


def _select(vars_to_warm_start) -> list:
    from flowgraph.framework.graph import GraphKeys, get_collection

    if vars_to_warm_start is None:
        return []
    if isinstance(vars_to_warm_start, str):
        pattern = re.compile(vars_to_warm_start)
        return [v for v in get_collection(GraphKeys.TRAINABLE_VARIABLES)
                if pattern.match(v.op.name)]
    if not isinstance(vars_to_warm_start, list | tuple):
        raise ValueError(f"vars_to_warm_start must be a string, a list or None; got "
                         f"{vars_to_warm_start!r}")
    if all(isinstance(v, str) for v in vars_to_warm_start):
        chosen, seen = [], set()
        for regex in vars_to_warm_start:
            pattern = re.compile(regex)
            for v in get_collection(GraphKeys.GLOBAL_VARIABLES):
                if pattern.match(v.op.name) and id(v) not in seen:
                    seen.add(id(v))
                    chosen.append(v)
        return chosen
    if all(hasattr(v, "op") for v in vars_to_warm_start):
        return list(vars_to_warm_start)
    raise ValueError("vars_to_warm_start must be a regular expression, a list of regular "
                     "expressions or a list of Variables; got a mixed list "
                     f"{vars_to_warm_start!r}")


def _grouped(chosen) -> list:
    """(name, variable) pairs; the parts of a partitioned variable come as one entry,
    named after the full variable (a list of parts), as the checkpoint holds them."""
    out, parts = [], {}
    for var in chosen:
        info = getattr(var, "_save_slice_info", None)
        if info is None:
            out.append((var.op.name, var))
        elif info.full_name not in parts:
            parts[info.full_name] = [var]
            out.append((info.full_name, parts[info.full_name]))
        else:
            parts[info.full_name].append(var)
    return out


def _vocab(path, size: int, what: str, var_name: str) -> list[str]:
    from flowgraph.io.gfile import GFile

    try:
        with GFile(path, "r") as f:
            words = [line.rstrip("\r\n") for line in f]
    except OSError as e:
        raise ValueError(f"Warm-starting variable '{var_name}': cannot read the {what} "
                         f"vocabulary {path}: {e}") from None
    if size is not None and size >= 0:
        if size > len(words):
            raise ValueError(
                f"Warm-starting variable '{var_name}': the {what} vocabulary {path} has "
                f"{len(words)} lines, fewer than its declared size {size}.")
        words = words[:size]
    return words


def _remap_with_vocab(var, reader, prev: str, info: VocabInfo, ckpt: str) -> None:
    """Set the initializer of `var` (a variable, or the list of a partitioned variable's
    parts) to the checkpoint tensor `prev` remapped by `info`."""
    parts = var if isinstance(var, list) else [var]
    if isinstance(var, list):
        full = parts[0]._save_slice_info
        name, shape = full.full_name, list(full.full_shape)
    else:
        name, shape = var.op.name, var.shape.as_list()
    axis = info.axis
    old = np.asarray(reader.get_tensor(prev))
    new_words = _vocab(info.new_vocab, info.new_vocab_size, "new", name)
    # TensorFlow passes old_vocab_size on for rows only: columns use the whole old file
    old_words = _vocab(info.old_vocab, info.old_vocab_size if axis == 0 else -1, "old", name)
    rows = len(new_words) + int(info.num_oov_buckets)
    # as TensorFlow's, a variable with fewer rows takes the first words of the new vocabulary
    too_long = None in shape or (shape[axis] > rows if axis == 0 else shape[axis] != rows)
    if old.ndim != len(shape) or old.ndim < axis + 1 or too_long \
            or old.shape[axis] < len(old_words) \
            or any(a != b for i, (a, b) in enumerate(zip(old.shape, shape)) if i != axis):
        raise ValueError(
            f"Warm-starting variable '{name}' with a VocabInfo (axis {axis}): the variable "
            f"has shape {shape}, expected {'at most ' if axis == 0 else ''}{rows} "
            f"(new_vocab_size + num_oov_buckets) along axis {axis}; tensor '{prev}' in "
            f"{ckpt} has shape {list(old.shape)}, expected "
            f"at least {len(old_words)} (the old vocabulary's size; the old OOV buckets "
            f"follow) along axis {axis}, and the other "
            "dimensions must match.")
    if axis == 0:
        new_words = new_words[:shape[0]]
    index = {w: i for i, w in reversed(list(enumerate(old_words)))}
    value = np.zeros(shape, dtype=old.dtype)
    found = np.zeros(shape, dtype=bool)
    for i, word in enumerate(new_words):
        j = index.get(word)
        if j is not None:
            dst = (slice(None),) * axis + (i,)
            value[dst] = old[(slice(None),) * axis + (j,)]
            found[dst] = True
    for part in parts:
        slice_info = getattr(part, "_save_slice_info", None) if len(parts) > 1 or \
            isinstance(var, list) else None
        if slice_info is None:
            region = (slice(None),) * len(shape)
        else:
            region = tuple(slice(o, o + n) for o, n in
                           zip(slice_info.var_offset, slice_info.var_shape))
        offset = (region[0].start or 0) if len(shape) else 0
        _assign_remapped(part, value[region], found[region], info,
                         _vocab_layout(shape, offset, len(new_words), info))
    logger.debug("Warm-started %s with vocabulary remapping: %d of %d words found", name,
                 sum(w in index for w in new_words), len(new_words))


def _vocab_layout(shape, offset: int, num_words: int, info: VocabInfo):
    """For a 2-D variable (or its partition along axis 0 starting at row `offset`):
    (offset, rows that are vocabulary words, columns loaded, OOV columns), as TensorFlow's
    remapping initializer splits it; None for other ranks or an OOV-only partition."""
    if len(shape) != 2:
        return None
    if info.axis == 0:
        row_vocab, cols, col_oov = num_words, shape[1], 0
    else:
        row_vocab, cols, col_oov = shape[0], num_words, int(info.num_oov_buckets)
    if offset > row_vocab:
        return None
    return offset, row_vocab, cols, col_oov


def _backup_fill(value: np.ndarray, found: np.ndarray, layout, init, dtype):
    """`value` with the cells not `found` drawn from the backup initializer `init` the
    way TensorFlow draws them, so seeded initializers give its values: one call of shape
    ``[missing, 1]`` for the missing cells of the loaded block (row-major), then one call
    for the OOV rows and one for the OOV columns, each concatenated after the block."""
    from flowgraph.framework.constant_op import constant
    from flowgraph.ops import array_index_ops, array_join_ops, array_shape_ops

    offset, row_vocab, cols, col_oov = layout
    rows = value.shape[0]
    row_oov = min(rows, max(0, offset + rows - row_vocab))
    loaded = rows - row_oov
    block, present = value[:loaded, :cols], found[:loaded, :cols]
    missing = int((~present).sum())
    fill = array_shape_ops.reshape(init([missing, 1], dtype=dtype), [-1])
    kept = block[present]
    index = np.empty(block.shape, dtype=np.int64)
    index[present] = np.arange(kept.size)
    index[~present] = kept.size + np.arange(missing)
    flat = array_join_ops.concat([constant(kept, dtype=dtype), fill], 0)
    out = array_shape_ops.reshape(array_index_ops.gather(flat, constant(index.ravel())),
                                  list(block.shape))
    if row_oov:
        out = array_join_ops.concat([out, init([row_oov, cols], dtype=dtype)], 0)
    if col_oov:
        out = array_join_ops.concat([out, init([rows, col_oov], dtype=dtype)], 1)
    return out


def _assign_remapped(var, value: np.ndarray, found: np.ndarray, info: VocabInfo,
                     layout=None) -> None:
    """Make `var` initialize to `value`, with the backup initializer where not `found`."""
    from flowgraph.framework.constant_op import constant
    from flowgraph.ops import array_index_ops, state_ops

    graph = var.graph
    dtype = var.dtype.base_dtype
    init = info.backup_initializer
    with graph.as_default(), graph.control_dependencies(None), \
            graph.name_scope(f"{var.op.name}/warm_start"):
        if init is None or found.all():
            initial = constant(value, dtype=dtype, name="remapped")
        elif layout is not None:
            initial = _backup_fill(value, found, layout, init, dtype)
        elif len(value.shape) == 2:
            # a partition holding only OOV rows: TensorFlow initializes it whole
            initial = init(list(value.shape), dtype=dtype)
        else:
            backup = init(list(value.shape), dtype=dtype)
            initial = array_index_ops.where(constant(found), constant(value, dtype=dtype), backup,
                                            name="remapped")
    with graph.as_default(), graph.control_dependencies(None), graph.colocate_with(var.op):
        var._initializer_op = state_ops.assign(var, initial).op
    var._initial_value = initial


def warm_start(ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
               var_name_to_prev_var_name=None) -> None:
    """Make the chosen variables of the default graph initialize from a checkpoint.

    Call it after the model is built and before its variables are initialized.
    `vars_to_warm_start` is a regular expression matched against the trainable
    variables' names, a list of them matched against all global variables, a list of
    Variables, or None. Each chosen variable reads the tensor of the same name (or its
    entry in `var_name_to_prev_var_name`); one with an entry in
    `var_name_to_vocab_info` is remapped to its new vocabulary (see `VocabInfo`). A
    variable missing from the checkpoint is a ValueError naming it.

    Example
    -------
    >>> import os, tempfile, numpy as np, flowgraph as tf
    >>> from flowgraph.train.checkpoint_utils import write_checkpoint
    >>> d = tempfile.mkdtemp()
    >>> write_checkpoint(os.path.join(d, "model.ckpt-1"), {"w": np.ones(3, np.float32)})
    >>> with tf.Graph().as_default():
    ...     w = tf.get_variable("w", [3], initializer=tf.zeros_initializer())
    ...     tf.train.warm_start(os.path.join(d, "model.ckpt-1"))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         print(sess.run(w))
    [1. 1. 1.]
    """
    from flowgraph.train import checkpoint_utils

    renames = dict(var_name_to_prev_var_name or {})
    vocab_infos = dict(var_name_to_vocab_info or {})
    chosen = _select(vars_to_warm_start)
    if not chosen:
        logger.info("Warm-starting: no variables to warm-start (vars_to_warm_start=%r).",
                    vars_to_warm_start)
    reader = checkpoint_utils.load_checkpoint(ckpt_to_initialize_from)
    with reader:
        available = reader.get_variable_to_shape_map()
        assignment, used = {}, set()
        for name, var in _grouped(chosen):
            prev = renames.get(name, name)
            used.add(name)
            if prev not in available:
                raise ValueError(
                    f"Warm-starting variable '{name}' needs tensor '{prev}', which is not in "
                    f"checkpoint {ckpt_to_initialize_from} (it has: {sorted(available)}). "
                    "Map it with var_name_to_prev_var_name or exclude it with "
                    "vars_to_warm_start.")
            logger.debug("Warm-starting variable: %s; prev_var_name: %s", name, prev)
            if name in vocab_infos:
                _remap_with_vocab(var, reader, prev, vocab_infos[name],
                                  ckpt_to_initialize_from)
            else:
                assignment[prev] = var
    for arg, given in (("var_name_to_prev_var_name", renames),
                       ("var_name_to_vocab_info", vocab_infos)):
        unused = sorted(set(given) - used)
        if unused:
            # worded (and the names shown as a set and a dict's keys) as TensorFlow's
            viable = [name for name, _ in _grouped(chosen)]
            raise ValueError(
                f"You provided the following variables in {arg} that were not used: "
                f"{{{', '.join(map(repr, unused))}}}.  Perhaps you misspelled them?  Here "
                f"is the list of viable variable names: dict_keys({viable!r})")
    if assignment:
        checkpoint_utils.init_from_checkpoint(ckpt_to_initialize_from, assignment)
    logger.info("Warm-started %d variables.", len(used))
