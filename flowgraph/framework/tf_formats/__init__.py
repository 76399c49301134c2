"""TensorFlow's own file formats, read and written without TensorFlow or the protobuf
package: checkpoints (`bundle` on the sorted table of `table`, checksums by `crc`),
GraphDefs (`graph_def`, with TensorFlow's OpDefs in `tf_op_defs`; protobuf text in
`text_format`) and ``tf.graph_util`` / ``tf.train.write_graph`` (`graph_util`)."""
