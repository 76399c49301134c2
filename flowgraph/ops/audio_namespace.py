"""``tf.audio``: TensorFlow's namespace of the WAV codec ops (re-exports of
`flowgraph/ops/audio_ops.py`, without that module's helpers).

Example
-------
>>> import flowgraph as tf
>>> sorted(n for n in dir(tf.audio) if not n.startswith("_"))
['decode_wav', 'encode_wav']
"""

from flowgraph.ops.audio_ops import decode_wav, encode_wav

__all__ = ["decode_wav", "encode_wav"]
