"""protobuf's Message API on flowgraph's message classes, with TensorFlow's bytes.

The expected bytes and values are TensorFlow 2.15's (tf.compat.v1), printed by the
oracle for the same messages."""

import pytest

import flowgraph as tf
from flowgraph.framework.proto_codec import DecodeError

# TensorFlow's bytes of `_config()` (one key in the map: TensorFlow's map order is its own)
CONFIG_BYTES = (b'\n\x07\n\x03CPU\x10\x02"\x07/job:ps(\x022\x10\t\x00\x00\x00\x00\x00\x00'
                b'\xe0? \x01*\x030,18\x01@\x01R\x1f\x1a\r\x18\xff\xff\xff\xff\xff\xff\xff'
                b'\xff\xff\x01(\x01R\x0e8\x02\xa2\x06\tconstfold')


def _config():
    c = tf.ConfigProto(device_count={"CPU": 2}, inter_op_parallelism_threads=2,
                       log_device_placement=True, allow_soft_placement=True,
                       gpu_options=tf.GPUOptions(allow_growth=True,
                                                 per_process_gpu_memory_fraction=0.5,
                                                 visible_device_list="0,1"))
    c.graph_options.optimizer_options.opt_level = tf.OptimizerOptions.L0
    c.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
    c.device_filters.append("/job:ps")
    c.graph_options.rewrite_options.arithmetic_optimization = 2
    c.graph_options.rewrite_options.optimizers.append("constfold")
    return c


def test_config_bytes_match_tensorflow():
    c = _config()
    assert c.SerializeToString() == CONFIG_BYTES
    assert c.SerializePartialToString() == CONFIG_BYTES
    assert c.ByteSize() == 75  # 84 in TensorFlow with a second key (9 bytes each)
    for cls in (tf.ConfigProto, tf.OptimizerOptions, tf.GPUOptions, tf.RunOptions,
                tf.GraphOptions):
        assert cls().SerializeToString() == b""
    ro = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, timeout_in_ms=5000,
                       output_partition_graphs=True)
    assert ro.SerializeToString() == b"\x08\x03\x10\x88'(\x01"


def test_config_parses_tensorflow_bytes():
    d = tf.ConfigProto.FromString(CONFIG_BYTES)
    assert d == _config()
    assert d.device_count["CPU"] == 2
    assert d.gpu_options.visible_device_list == "0,1"
    assert d.graph_options.optimizer_options.opt_level == -1
    assert list(d.device_filters) == ["/job:ps"]
    x = tf.ConfigProto()
    assert x.ParseFromString(CONFIG_BYTES) == 75
    x.MergeFromString(tf.ConfigProto(intra_op_parallelism_threads=3).SerializeToString())
    assert (x.intra_op_parallelism_threads, x.inter_op_parallelism_threads) == (3, 2)
    with pytest.raises(DecodeError):
        tf.ConfigProto.FromString(b"\xff\xff")


def test_config_fields_and_errors():
    c = _config()
    assert [(f.name, f.number, v) for f, v in c.gpu_options.ListFields()] == [
        ("per_process_gpu_memory_fraction", 1, 0.5), ("allow_growth", 4, True),
        ("visible_device_list", 5, "0,1")]
    assert [f.name for f, _ in c.ListFields()] == [
        "device_count", "device_filters", "inter_op_parallelism_threads", "gpu_options",
        "allow_soft_placement", "log_device_placement", "graph_options"]
    assert c.HasField("gpu_options") and not tf.ConfigProto().HasField("gpu_options")
    for method in (c.HasField, c.ClearField, c.WhichOneof):
        with pytest.raises(ValueError, match=r'Protocol message ConfigProto has no "nope" field\.'):
            method("nope")
    for method in (c.MergeFrom, c.CopyFrom):
        with pytest.raises(TypeError, match="must be instance of same class"):
            method(tf.GPUOptions())
    c.ClearField("gpu_options")
    assert not c.HasField("gpu_options") and c.gpu_options.allow_growth is False
    assert c.IsInitialized()


def test_config_merge_copy_clear():
    e = tf.ConfigProto(inter_op_parallelism_threads=7, device_filters=["/job:a"],
                       device_count={"CPU": 1})
    e.MergeFrom(_config())
    assert e.inter_op_parallelism_threads == 2
    assert list(e.device_filters) == ["/job:a", "/job:ps"]
    assert dict(e.device_count) == {"CPU": 2}
    assert e.gpu_options.allow_growth is True
    f = tf.ConfigProto()
    f.CopyFrom(e)
    f.gpu_options.allow_growth = False  # a copy, not the same sub-message
    assert e.gpu_options.allow_growth is True
    e.Clear()
    assert e.SerializeToString() == b"" and e == tf.ConfigProto()


def test_saver_def_message():
    sd_bytes = (b'\n\x0csave/Const:0\x12\x19save/control_dependency:0\x1a\x10'
                b'save/restore_all \x05(\x015\x00@\x1cF8\x02')
    s = tf.train.SaverDef(filename_tensor_name="save/Const:0",
                          save_tensor_name="save/control_dependency:0",
                          restore_op_name="save/restore_all", max_to_keep=5, sharded=True,
                          keep_checkpoint_every_n_hours=10000.0, version=tf.train.SaverDef.V2)
    assert s.SerializeToString() == sd_bytes and s.ByteSize() == 70
    assert tf.train.SaverDef.FromString(sd_bytes) == s
    sd0 = tf.train.SaverDef()  # TensorFlow's proto3 defaults
    assert (sd0.max_to_keep, sd0.version, sd0.keep_checkpoint_every_n_hours) == (0, 0, 0.0)
    assert sd0.SerializeToString() == b""
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        saver_def = tf.train.Saver(max_to_keep=3).as_saver_def()
    assert saver_def.version == tf.train.SaverDef.V2 and saver_def.max_to_keep == 3
    assert tf.train.SaverDef.FromString(saver_def.SerializeToString()) == saver_def


def test_codec_messages_byte_size():
    g = tf.GraphDef()
    n = g.node.add()
    n.name, n.op = "a", "Const"
    assert (g.ByteSize(), len(g.SerializePartialToString())) == (12, 12)
    ev = tf.Event(step=3, wall_time=1.5)
    assert ev.ByteSize() == 11
    assert ev.SerializePartialToString() == b"\t\x00\x00\x00\x00\x00\x00\xf8?\x10\x03"
    ex = tf.train.Example(features=tf.train.Features(feature={
        "a": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2]))}))
    assert ex.ByteSize() == 15
    assert ex.SerializePartialToString() == b"\n\r\n\x0b\n\x01a\x12\x06\x1a\x04\n\x02\x01\x02"
    cd = tf.train.ClusterSpec({"ps": ["h:1"], "worker": ["h:2"]}).as_cluster_def()
    assert cd.ByteSize() == 34


def test_run_metadata_message():
    from flowgraph.runtime.config import DeviceStepStats, NodeExecStats

    tf_bytes = b'\n \n\x1e\n\x06/cpu:0\x12\x14\n\x01a\x10\x05 \x03(\x03B\x07a = X()P\x07'
    md = tf.RunMetadata()
    md.step_stats.dev_stats.append(DeviceStepStats(device="/cpu:0", node_stats=[NodeExecStats(
        node_name="a", all_start_micros=5, op_end_rel_micros=3, all_end_rel_micros=3,
        thread_id=7, timeline_label="a = X()")]))
    assert md.SerializeToString() == tf_bytes and md.ByteSize() == 34
    assert [f.name for f, _ in md.ListFields()] == ["step_stats"]
    assert tf.RunMetadata().SerializeToString() == b""
    back = tf.RunMetadata.FromString(tf_bytes)
    assert back.HasField("step_stats") and back.SerializeToString() == tf_bytes
    node = back.step_stats.dev_stats[0].node_stats[0]
    assert (node.node_name, node.all_start_micros, node.thread_id) == ("a", 5, 7)
    back.MergeFrom(md)
    assert len(back.step_stats.dev_stats) == 2
    # a traced run's metadata round-trips through its bytes
    traced = tf.RunMetadata()
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32)
        y = tf.sin(p) + 2
        with tf.Session() as sess:
            sess.run(y, {p: 1.0}, run_metadata=traced,
                     options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
    data = traced.SerializeToString()
    assert data and tf.RunMetadata.FromString(data).SerializeToString() == data


def test_experimental_messages():
    c = tf.ConfigProto(experimental=tf.ConfigProto.Experimental(
        collective_group_leader="/job:w/task:0", xla_fusion_autotuner_thresh=3, use_tfrt=True))
    c.experimental.disable_thread_spinning = True
    assert c.SerializeToString() == b'\x82\x01\x16\n\r/job:w/task:0H\x01x\x03\x90\x01\x01'
    assert c.HasField("experimental") and not tf.ConfigProto().HasField("experimental")
    exp = tf.GPUOptions.Experimental
    g = tf.GPUOptions(experimental=exp(
        virtual_devices=[exp.VirtualDevices(memory_limit_mb=[1024.0, 512.0], priority=[0, 1])],
        use_unified_memory=True, gpu_host_mem_limit_in_mb=2.5))
    g_bytes = (b'J\x17\n\x0e\n\x08\x00\x00\x80D\x00\x00\x00D\x12\x02\x00\x01\x10\x01m'
               b'\x00\x00 @')
    assert g.SerializeToString() == g_bytes
    g2 = tf.GPUOptions.FromString(g_bytes)
    assert list(g2.experimental.virtual_devices[0].memory_limit_mb) == [1024.0, 512.0]
    assert g2.experimental.use_unified_memory is True
    r = tf.RunOptions(experimental=tf.RunOptions.Experimental(collective_graph_key=9,
                                                              use_run_handler_pool=True))
    assert r.SerializeToString() == b"B\x04\x08\t\x10\x01"
