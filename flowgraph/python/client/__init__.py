"""``tensorflow.python.client`` compatibility path."""
