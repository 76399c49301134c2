"""Warm-starting: initialize some variables of a new model from another checkpoint.

`WarmStartSettings` says which checkpoint and which variables; `warm_start` (called by
`Estimator.train` when `model_dir` has no checkpoint yet) makes the chosen variables'
initializers read the checkpoint, through `tf.train.init_from_checkpoint`.

Example
-------
>>> WarmStartSettings("/tmp/old_model")
WarmStartSettings(ckpt_to_initialize_from='/tmp/old_model', vars_to_warm_start='.*', \
var_name_to_vocab_info=None, var_name_to_prev_var_name=None)
"""

from __future__ import annotations

import collections
import logging
import os
import re

__all__ = ["VocabInfo", "WarmStartSettings", "warm_start"]

logger = logging.getLogger("flowgraph")


class VocabInfo(collections.namedtuple("VocabInfo", [
        "new_vocab", "new_vocab_size", "num_oov_buckets", "old_vocab", "old_vocab_size",
        "backup_initializer", "axis"])):
    """Vocabulary remapping for one warm-started embedding (TF's `tf.estimator.VocabInfo`).

    Accepted for API compatibility; `warm_start` does not remap vocabularies yet and
    raises NotImplementedError when given one.
    """

    __slots__ = ()

    def __new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab, old_vocab_size=-1,
                backup_initializer=None, axis=0):
        if axis not in (0, 1):
            raise ValueError(f"The only supported values for the axis argument are 0 and 1. "
                             f"Provided axis: {axis}")
        return super().__new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab,
                               old_vocab_size, backup_initializer, axis)


class WarmStartSettings(collections.namedtuple("WarmStartSettings", [
        "ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info",
        "var_name_to_prev_var_name"])):
    """Which checkpoint and which variables to warm-start from.

    Parameters
    ----------
    ckpt_to_initialize_from : str
        A checkpoint prefix (``.../model.ckpt-100``) or a directory (its latest checkpoint).
    vars_to_warm_start : str, list or None, default ``'.*'``
        A regular expression matched (from the start of the name) against the *trainable*
        variables; a list of regular expressions matched against all global variables; a
        list of Variables or names; or None for no variable.
    var_name_to_vocab_info : dict, optional
        Not supported yet (vocabulary remapping).
    var_name_to_prev_var_name : dict, optional
        New variable name -> its name in the checkpoint, for renamed variables.
    """

    __slots__ = ()

    def __new__(cls, ckpt_to_initialize_from, vars_to_warm_start=".*",
                var_name_to_vocab_info=None, var_name_to_prev_var_name=None):
        if not ckpt_to_initialize_from:
            raise ValueError("Need to specify where to warm-start from "
                             "(ckpt_to_initialize_from).")
        return super().__new__(cls, os.fspath(ckpt_to_initialize_from), vars_to_warm_start,
                               var_name_to_vocab_info, var_name_to_prev_var_name)


def settings_from(warm_start_from) -> WarmStartSettings | None:
    """`Estimator(warm_start_from=...)` as WarmStartSettings: a path or the settings."""
    if warm_start_from is None:
        return None
    if isinstance(warm_start_from, WarmStartSettings):
        return warm_start_from
    if isinstance(warm_start_from, (str, bytes, os.PathLike)):
        path = os.fsdecode(warm_start_from)
        if os.path.isdir(os.path.join(path, "variables")):
            raise NotImplementedError(
                f"warm_start_from={path!r} looks like a SavedModel; warm-starting from a "
                f"SavedModel is not supported yet. Pass a checkpoint or a model_dir.")
        return WarmStartSettings(ckpt_to_initialize_from=path)
    raise ValueError(f"warm_start_from must be a string or a WarmStartSettings, instead got "
                     f"{type(warm_start_from)}")


def _base_name(var) -> str:
    return var.op.name


def _select(vars_to_warm_start) -> list:
    from flowgraph.framework.graph import GraphKeys, get_collection

    if vars_to_warm_start is None:
        return []
    if isinstance(vars_to_warm_start, str):
        pattern = re.compile(vars_to_warm_start)
        return [v for v in get_collection(GraphKeys.TRAINABLE_VARIABLES)
                if pattern.match(_base_name(v))]
    if not isinstance(vars_to_warm_start, (list, tuple)):
        raise ValueError(f"vars_to_warm_start must be a string, a list or None; got "
                         f"{vars_to_warm_start!r}")
    if all(isinstance(v, str) for v in vars_to_warm_start):
        chosen, seen = [], set()
        for regex in vars_to_warm_start:
            pattern = re.compile(regex)
            for v in get_collection(GraphKeys.GLOBAL_VARIABLES):
                if pattern.match(_base_name(v)) and id(v) not in seen:
                    seen.add(id(v))
                    chosen.append(v)
        return chosen
    if all(hasattr(v, "op") for v in vars_to_warm_start):
        return list(vars_to_warm_start)
    raise ValueError("vars_to_warm_start must be a regular expression, a list of regular "
                     "expressions or a list of Variables; got a mixed list "
                     f"{vars_to_warm_start!r}")


def warm_start(ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
               var_name_to_prev_var_name=None) -> None:
    """Make the chosen variables of the default graph initialize from a checkpoint.

    Call it after the model is built and before its variables are initialized. Each
    chosen variable reads the tensor of the same name (or its entry in
    `var_name_to_prev_var_name`); a variable missing from the checkpoint is a ValueError
    naming it.

    Example
    -------
    >>> import os, tempfile, numpy as np, flowgraph as tf
    >>> from flowgraph.train.checkpoint_utils import write_checkpoint
    >>> d = tempfile.mkdtemp()
    >>> write_checkpoint(os.path.join(d, "model.ckpt-1"), {"w": np.ones(3, np.float32)})
    >>> with tf.Graph().as_default():
    ...     w = tf.get_variable("w", [3], initializer=tf.zeros_initializer())
    ...     warm_start(os.path.join(d, "model.ckpt-1"))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         print(sess.run(w))
    [1. 1. 1.]
    """
    from flowgraph.train import checkpoint_utils

    if var_name_to_vocab_info:
        raise NotImplementedError(
            "WarmStartSettings.var_name_to_vocab_info (vocabulary remapping) is not supported "
            f"yet; got entries for {sorted(var_name_to_vocab_info)}.")
    renames = dict(var_name_to_prev_var_name or {})
    chosen = _select(vars_to_warm_start)
    if not chosen:
        logger.info("Warm-starting: no variables to warm-start (vars_to_warm_start=%r).",
                    vars_to_warm_start)
    reader = checkpoint_utils.load_checkpoint(ckpt_to_initialize_from)
    with reader:
        available = reader.get_variable_to_shape_map()
    assignment = {}
    used = set()
    for var in chosen:
        name = _base_name(var)
        prev = renames.get(name, name)
        used.add(name)
        if prev not in available:
            raise ValueError(
                f"Warm-starting variable '{name}' needs tensor '{prev}', which is not in "
                f"checkpoint {ckpt_to_initialize_from} (it has: {sorted(available)}). Map it "
                f"with var_name_to_prev_var_name or exclude it with vars_to_warm_start.")
        logger.debug("Warm-starting variable: %s; prev_var_name: %s", name, prev)
        assignment[prev] = var
    unused = sorted(set(renames) - used)
    if unused:
        raise ValueError(
            f"You provided the following variables in var_name_to_prev_var_name that were not "
            f"used: {unused}. Perhaps you misspelled them? Here is the list of viable variable "
            f"names: {sorted(_base_name(v) for v in chosen)}")
    if assignment:
        checkpoint_utils.init_from_checkpoint(ckpt_to_initialize_from, assignment)
    logger.info("Warm-started %d variables.", len(assignment))
