"""TensorFlow 1.x import paths kept for compatibility (``tensorflow.python.*``)."""
