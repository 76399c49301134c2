"""TensorFlow's own file formats, read and written without TensorFlow or the protobuf
package: checkpoints (`bundle` on the sorted table of `table`, checksums by `crc`),
GraphDefs (`graph_def`, with TensorFlow's OpDefs in `tf_op_defs`; protobuf text written
by `text_format` and read by `text_parse`), ``tf.graph_util`` / ``tf.train.write_graph``
(`graph_util`), and MetaGraphDefs (``.meta`` files and the meta graphs of a SavedModel:
messages in `meta_graph_messages`, files in `meta_graph`, TensorFlow's saver nodes in
`saver_graph`)."""
