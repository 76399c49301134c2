"""The `tf.math` namespace: re-exports only."""
