"""Warm-starting an Estimator: initialize some variables of a new model from another
checkpoint.

`WarmStartSettings` says which checkpoint and which variables; `warm_start` (called by
`Estimator.train` when `model_dir` has no checkpoint yet) is ``tf.train.warm_start``
(`flowgraph.train.warm_starting`, with `VocabInfo`), which makes the chosen variables'
initializers read the checkpoint.

Example
-------
>>> WarmStartSettings("/tmp/old_model")
WarmStartSettings(ckpt_to_initialize_from='/tmp/old_model', vars_to_warm_start='.*', \
var_name_to_vocab_info={}, var_name_to_prev_var_name={})
"""

from __future__ import annotations

import collections
import os

from flowgraph.train.warm_starting import VocabInfo, warm_start

__all__ = ["VocabInfo", "WarmStartSettings", "warm_start"]


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
        Variable name -> `VocabInfo`, to remap rows (or columns) to a new vocabulary.
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
                               var_name_to_vocab_info or {}, var_name_to_prev_var_name or {})


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
