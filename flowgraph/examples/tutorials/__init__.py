"""TensorFlow 1.x's ``tensorflow.examples.tutorials`` helpers (``mnist.input_data``)."""
