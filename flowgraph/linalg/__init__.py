"""The `tf.linalg` namespace: re-exports only."""
