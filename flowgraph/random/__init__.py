"""The `tf.random` namespace: re-exports only."""
