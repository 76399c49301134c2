"""``tensorflow.examples.tutorials.mnist``: the beginner tutorials' MNIST reader."""
