"""The graph IR: dtypes, shapes, graphs, operations, tensors, the op registry."""
