"""The `tf.nn` namespace: re-exports only."""
