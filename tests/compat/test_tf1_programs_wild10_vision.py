"""TF1 programs "from the wild", round 10, vision: the official ResNet v1 Estimator
(``tf.layers`` with fused batch norm, fixed padding, a warm-up ``tf.cond`` learning rate
over ``piecewise_constant``, weight decay over the trainable variables that are not batch
norm), object-detection utilities (NMS v3/overlaps/combined/padded, Faster R-CNN box
encodings, ``sample_distorted_bounding_box``, ``crop_and_resize`` with nearest sampling,
extrapolation and gradients, coloured ``draw_bounding_boxes``), a ``tf.data`` augmentation
pipeline (PNG/JPEG round trips, random crops, flips, colour jitter, a random ``rot90``),
every resize method, a U-Net with ``conv2d_transpose`` (layer and raw, dynamic output
shape), ``resize_bilinear(align_corners=True)`` skip connections, class-weighted pixel-wise
losses, dice and ``mean_iou``, a Gatys style transfer (gram matrices through
``matmul(transpose_a=True)``/``adjoint_a``, ``total_variation``), and MobileNet v1/v2
(slim ``separable_conv2d`` without pointwise, dilated ``depthwise_conv2d``, ``relu6``,
``slim.learning.create_train_op`` with RMSProp); and the classes of discrepancy they found.

Each program was first run under TensorFlow 2.15's ``tf.compat.v1`` (``tf_slim`` for
``tf.contrib.slim``) with the tf-oracle; the values asserted here are the ones TensorFlow
printed. Fixed: the shape functions of the NMS family and ``CropAndResize`` now check
ranks and matching box counts when the graph is built (ValueError, as TF) rather than
when run; ``CropAndResize``'s out-of-range ``box_ind`` is an ``OutOfRangeError``;
NMS kernels check a scalar ``max_output_size``; ``non_max_suppression_padded`` takes
batches; ``tf.image.rot90`` takes a tensor ``k`` and builds TF's ``tf.case`` graph; a
batch's random flips were the opposite of TF's (TF flips where the draw rounds to 1);
``tensorflow.python.ops.control_flow_ops.switch``/``merge`` (slim's random selector);
``resize_bilinear`` rounds in float32 as TF's kernel; ``rgb_to_grayscale``, ``psnr``,
``ssim``, ``ssim_multiscale``, ``sobel_edges``, ``image_gradients``, ``central_crop``,
the random flips, ``tf.random_uniform(minval=0, maxval=x)`` and ``tf.metrics.mean_iou``
build TF's graphs (result names and op types).
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def _r(x, n=4):
    return np.round(np.asarray(x, dtype=np.float64), n).tolist()


# -- tensorflow/models official/r1/resnet ---------------------------------------------------
def _batch_norm(inputs, training):
    return tf.layers.batch_normalization(inputs=inputs, axis=3, momentum=0.997, epsilon=1e-5,
                                         center=True, scale=True, training=training,
                                         fused=True)


def _conv2d_fixed_padding(inputs, filters, kernel_size, strides):
    if strides > 1:
        pad_total = kernel_size - 1
        beg = pad_total // 2
        inputs = tf.pad(inputs, [[0, 0], [beg, pad_total - beg], [beg, pad_total - beg],
                                 [0, 0]])
    return tf.layers.conv2d(inputs=inputs, filters=filters, kernel_size=kernel_size,
                            strides=strides, padding=("SAME" if strides == 1 else "VALID"),
                            use_bias=False,
                            kernel_initializer=tf.variance_scaling_initializer(seed=1))


def _building_block_v1(inputs, filters, training, projection_shortcut, strides):
    shortcut = inputs
    if projection_shortcut is not None:
        shortcut = _batch_norm(projection_shortcut(inputs), training)
    inputs = tf.nn.relu(_batch_norm(_conv2d_fixed_padding(inputs, filters, 3, strides),
                                    training))
    inputs = _batch_norm(_conv2d_fixed_padding(inputs, filters, 3, 1), training)
    inputs += shortcut
    return tf.nn.relu(inputs)


def _resnet(inputs, training):
    with tf.variable_scope("resnet_model"):
        inputs = tf.identity(_conv2d_fixed_padding(inputs, 8, 3, 1), "initial_conv")
        inputs = tf.nn.relu(_batch_norm(inputs, training))
        inputs = tf.layers.max_pooling2d(inputs, 3, 2, "SAME")
        inputs = tf.identity(inputs, "initial_max_pool")
        for i in range(2):
            filters, strides = 8 * 2 ** i, 1 if i == 0 else 2
            inputs = _building_block_v1(
                inputs, filters, training,
                lambda v, f=filters, s=strides: _conv2d_fixed_padding(v, f, 1, s), strides)
            inputs = tf.identity(inputs, f"block_layer{i + 1}")
        inputs = tf.reduce_mean(inputs, [1, 2], keepdims=True)
        inputs = tf.squeeze(tf.identity(inputs, "final_reduce_mean"), [1, 2])
        inputs = tf.layers.dense(inputs=inputs, units=4,
                                 kernel_initializer=tf.glorot_uniform_initializer(seed=2))
        return tf.identity(inputs, "final_dense")


def _learning_rate_fn(global_step):
    # batch 4 of 16 images: boundaries at epochs 1 and 2, one warm-up epoch
    lr = tf.train.piecewise_constant(global_step, [4, 8], [0.1, 0.01, 0.001])
    warmup_lr = 0.1 * tf.cast(global_step, tf.float32) / tf.cast(4, tf.float32)
    return tf.cond(pred=global_step < 4, true_fn=lambda: warmup_lr, false_fn=lambda: lr)


def _resnet_model_fn(features, labels, mode):
    tf.summary.image("images", features, max_outputs=2)
    logits = tf.cast(_resnet(features, mode == tf.estimator.ModeKeys.TRAIN), tf.float32)
    predictions = {"classes": tf.argmax(logits, axis=1),
                   "probabilities": tf.nn.softmax(logits, name="softmax_tensor")}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(
            mode=mode, predictions=predictions,
            export_outputs={"predict": tf.estimator.export.PredictOutput(predictions)})
    cross_entropy = tf.losses.sparse_softmax_cross_entropy(logits=logits, labels=labels)
    tf.identity(cross_entropy, name="cross_entropy")
    tf.summary.scalar("cross_entropy", cross_entropy)
    l2_loss = 1e-4 * tf.add_n([tf.nn.l2_loss(tf.cast(v, tf.float32))
                               for v in tf.trainable_variables()
                               if "batch_normalization" not in v.name])
    loss = cross_entropy + l2_loss
    train_op = None
    if mode == tf.estimator.ModeKeys.TRAIN:
        global_step = tf.train.get_or_create_global_step()
        learning_rate = _learning_rate_fn(global_step)
        tf.identity(learning_rate, name="learning_rate")
        optimizer = tf.train.MomentumOptimizer(learning_rate=learning_rate, momentum=0.9)
        minimize_op = optimizer.apply_gradients(optimizer.compute_gradients(loss), global_step)
        train_op = tf.group(minimize_op, tf.get_collection(tf.GraphKeys.UPDATE_OPS))
    accuracy = tf.metrics.accuracy(labels, predictions["classes"])
    top_k = tf.metrics.mean(tf.nn.in_top_k(predictions=logits, targets=labels, k=2,
                                           name="top_5_op"))
    tf.identity(accuracy[1], name="train_accuracy")
    return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions, loss=loss,
                                      train_op=train_op,
                                      eval_metric_ops={"accuracy": accuracy,
                                                       "accuracy_top_5": top_k})


def test_official_resnet_v1_estimator_with_warmup_and_weight_decay(tmp_path):
    rs = np.random.RandomState(0)
    x_np = rs.rand(16, 12, 12, 3).astype(np.float32)
    y_np = rs.randint(0, 4, 16).astype(np.int32)

    def input_fn(training):
        def make():
            ds = tf.data.Dataset.from_tensor_slices((x_np, y_np))
            return (ds.repeat() if training else ds).batch(4, drop_remainder=training)
        return make

    cfg = tf.estimator.RunConfig(tf_random_seed=3, save_summary_steps=2,
                                 log_step_count_steps=100)
    est = tf.estimator.Estimator(_resnet_model_fn, str(tmp_path), config=cfg)
    hook = tf.train.LoggingTensorHook({"lr": "learning_rate", "ce": "cross_entropy",
                                       "acc": "train_accuracy"}, every_n_iter=3)
    est.train(input_fn(True), steps=10, hooks=[hook])
    ev = est.evaluate(input_fn(False))
    assert {k: _r(v) for k, v in ev.items()} == {
        "accuracy": 0.375, "accuracy_top_5": 0.625, "global_step": 10.0, "loss": 1.3159}
    pr = list(est.predict(input_fn(False)))
    assert len(pr) == 16 and _r(pr[0]["probabilities"]) == [0.367, 0.2594, 0.1612, 0.2124]
    assert [int(p["classes"]) for p in pr] == [0] * 16
    assert len(est.get_variable_names()) == 61
    assert _r(est.get_variable_value("resnet_model/batch_normalization/moving_mean")) == [
        -0.0178, 0.006, -0.0116, -0.0008, 0.0128, 0.0108, 0.0183, 0.0083]

    with tf.Graph().as_default() as g:
        out = _resnet(tf.placeholder(tf.float32, [None, 12, 12, 3]), True)
        assert (out.name, str(out.shape)) == ("resnet_model/final_dense:0", "(?, 4)")
        bn = [op.type for op in g.get_operations()
              if "batch_normalization/" in op.name and op.name.count("/") == 2][:8]
        assert bn == ["VariableV2"] * 4 + ["FusedBatchNormV3", "Const", "AssignSub",
                                            "AssignSub"]
        assert str(g.get_tensor_by_name("resnet_model/initial_max_pool:0").shape) == \
            "(?, 6, 6, 8)"
        assert str(g.get_tensor_by_name("resnet_model/block_layer2:0").shape) == \
            "(?, 3, 3, 16)"
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        assert (len(updates), updates[0].name) == (
            14, "resnet_model/batch_normalization/AssignMovingAvg")


# -- object detection utilities (TF object detection API style) -----------------------------
def _encode(boxes, anchors, scale=(10.0, 10.0, 5.0, 5.0)):
    ymin, xmin, ymax, xmax = tf.unstack(tf.transpose(boxes))
    ya0, xa0, ya1, xa1 = tf.unstack(tf.transpose(anchors))
    ha, wa = ya1 - ya0, xa1 - xa0
    yca, xca = ya0 + ha / 2.0, xa0 + wa / 2.0
    h, w = ymax - ymin, xmax - xmin
    yc, xc = ymin + h / 2.0, xmin + w / 2.0
    ha += 1e-8
    wa += 1e-8
    h += 1e-8
    w += 1e-8
    tx, ty = (xc - xca) / wa * scale[1], (yc - yca) / ha * scale[0]
    tw, th = tf.log(w / wa) * scale[3], tf.log(h / ha) * scale[2]
    return tf.transpose(tf.stack([ty, tx, th, tw]))


def _decode(rel, anchors, scale=(10.0, 10.0, 5.0, 5.0)):
    ya0, xa0, ya1, xa1 = tf.unstack(tf.transpose(anchors))
    ha, wa = ya1 - ya0, xa1 - xa0
    yca, xca = ya0 + ha / 2.0, xa0 + wa / 2.0
    ty, tx, th, tw = tf.unstack(tf.transpose(rel))
    ty /= scale[0]
    tx /= scale[1]
    th /= scale[2]
    tw /= scale[3]
    w, h = tf.exp(tw) * wa, tf.exp(th) * ha
    yc, xc = ty * ha + yca, tx * wa + xca
    return tf.transpose(tf.stack([yc - h / 2.0, xc - w / 2.0, yc + h / 2.0, xc + w / 2.0]))


def test_detection_nms_family_box_coding_sampling_and_crops():
    rs = np.random.RandomState(1)
    yx = rs.rand(10, 2).astype(np.float32) * 0.6
    hw = rs.rand(10, 2).astype(np.float32) * 0.3 + 0.1
    boxes_np = np.concatenate([yx, yx + hw], 1)
    scores_np = rs.rand(10).astype(np.float32)
    boxes, scores = tf.constant(boxes_np), tf.constant(scores_np)
    iou_t = tf.placeholder_with_default(0.4, [], name="iou")
    sel = tf.image.non_max_suppression(boxes, scores, 5, iou_threshold=iou_t)
    assert (sel.name, sel.op.type, str(sel.shape)) == (
        "non_max_suppression/NonMaxSuppressionV3:0", "NonMaxSuppressionV3", "(?,)")
    assert [i.op.type for i in sel.op.inputs] == ["Const", "Const", "Const",
                                                  "PlaceholderWithDefault", "Const"]
    ov = tf.image.non_max_suppression_overlaps(tf.matmul(boxes, boxes, transpose_b=True),
                                               scores, 4, overlap_threshold=1.0)
    assert ov.name == "non_max_suppression_overlaps/NonMaxSuppressionWithOverlaps:0"
    b4 = tf.constant(np.stack([boxes_np, boxes_np[::-1]])[:, :, None, :])
    sc = tf.constant(np.stack([
        np.stack([scores_np, scores_np[::-1], scores_np ** 2], 1),
        np.stack([scores_np ** 2, scores_np, scores_np[::-1]], 1)]))
    nb, ns, ncl, nv = tf.image.combined_non_max_suppression(b4, sc, 3, 6, iou_threshold=0.5,
                                                            score_threshold=0.1)
    assert nb.name == "combined_non_max_suppression/CombinedNonMaxSuppression:0"
    assert [str(t.shape) for t in (nb, ns, ncl, nv)] == ["(2, 6, 4)", "(2, 6)", "(2, 6)",
                                                          "(2,)"] and nv.dtype == tf.int32
    nb2, ns2, ncl2, nv2 = tf.image.combined_non_max_suppression(b4, sc, 3, 8, pad_per_class=True,
                                                                clip_boxes=False)
    assert [str(t.shape) for t in (nb2, ns2)] == ["(2, 8, 4)", "(2, 8)"]
    anchors = tf.constant(boxes_np[::-1].copy())
    enc = _encode(boxes, anchors)
    dec = _decode(enc, anchors)
    img = tf.constant(rs.rand(20, 24, 3).astype(np.float32))
    tf.set_random_seed(7)
    begin, size, bbox = tf.image.sample_distorted_bounding_box(
        tf.shape(img), bounding_boxes=tf.constant([[[0.1, 0.1, 0.8, 0.9]]]),
        min_object_covered=0.3, aspect_ratio_range=[0.75, 1.33], area_range=[0.05, 1.0],
        max_attempts=100, use_image_if_no_bounding_boxes=True, seed=5)
    assert begin.name == "sample_distorted_bounding_box/SampleDistortedBoundingBoxV2:0"
    assert [str(t.shape) for t in (begin, size, bbox)] == ["(3,)", "(3,)", "(1, 1, 4)"]
    crop = tf.slice(img, begin, size)
    assert str(crop.shape) == "(?, ?, ?)"
    b2, s2, _ = tf.image.sample_distorted_bounding_box(
        tf.shape(img), tf.zeros([0, 0, 4]), seed=3, seed2=4, min_object_covered=0.0,
        use_image_if_no_bounding_boxes=True)
    im4 = tf.constant(rs.rand(2, 8, 10, 1).astype(np.float32))
    cr = tf.image.crop_and_resize(im4, tf.constant([[0.0, 0.0, 1.0, 1.0], [-0.2, 0.1, 0.6, 1.3],
                                                    [0.5, 0.5, 0.2, 0.1]]),
                                  tf.constant([0, 1, 1]), [3, 4], method="nearest",
                                  extrapolation_value=-1.0, name="crops")
    assert (cr.name, str(cr.shape)) == ("crops:0", "(3, 3, 4, 1)")
    crb = tf.image.crop_and_resize(im4, boxes[:3], tf.constant([0, 1, 0]), tf.constant([2, 2]))
    gi, gb = tf.gradients(tf.reduce_sum(crb * crb), [im4, boxes])
    assert (gi.op.type, gb.op.type) == ("CropAndResizeGradImage", "StridedSliceGrad")
    dr = tf.image.draw_bounding_boxes(tf.zeros([1, 8, 10, 4]), boxes[None, :2],
                                      colors=np.array([[1, 0, 0, 1], [0, 1, 0, 1]], np.float32))
    pidx, pn = tf.image.non_max_suppression_padded(boxes, scores, 6, iou_threshold=0.3)
    assert (str(pidx.shape), str(pn.shape)) == ("(?,)", "()")
    with tf.Session() as sess:
        v = sess.run(dict(sel=sel, ov=ov, nb=nb, ns=ns, ncl=ncl, nv=nv, ns2=ns2, ncl2=ncl2,
                          nv2=nv2, enc=enc, dec=dec, begin=begin, size=size, bbox=bbox,
                          crop=crop, b2=b2, s2=s2, cr=cr, crb=crb, gi=gi, gb=gb, dr=dr,
                          pidx=pidx, pn=pn))
        assert sess.run(sel, {iou_t: 0.9}).tolist() == [0, 6, 3, 1, 5]
    assert v["sel"].tolist() == [0, 3, 1, 5, 7] and v["ov"].tolist() == [0, 3, 1, 5]
    assert _r(v["nb"][0, :2]) == [[0.2502, 0.4322, 0.5904, 0.8227],
                                  [0.0842, 0.1189, 0.1897, 0.4439]]
    assert _r(v["ns"]) == [[0.9889, 0.9889, 0.9778, 0.9086, 0.9086, 0.8255]] * 2
    assert v["ncl"].tolist() == [[0, 1, 2, 0, 1, 2], [1, 2, 0, 1, 2, 0]]
    assert v["nv"].tolist() == [6, 6] and v["nv2"].tolist() == [8, 8]
    assert _r(v["ns2"][0, 6:]) == [0.7893, 0.7893] and v["ncl2"][1, 6:].tolist() == [1, 2]
    assert _r(v["enc"][:2]) == [[26.8612, 10.6463, 5.8551, 0.9171],
                                [-10.0106, -4.999, -2.2771, -0.6496]]
    assert _r(v["dec"][1]) == [0.0001, 0.1814, 0.1941, 0.4891]
    assert v["begin"].tolist() == [1, 0, 0] and v["size"].tolist() == [15, 15, -1]
    assert _r(v["bbox"]) == [[[0.05, 0.0, 0.8, 0.625]]]
    assert v["crop"].shape == (15, 15, 3) and _r(v["crop"].sum()) == 337.1569
    assert v["b2"].tolist() == [5, 12, 0] and v["s2"].tolist() == [8, 10, -1]
    assert _r(v["cr"][1, :, :, 0]) == [[-1.0, -1.0, -1.0, -1.0], [0.4097, 0.6721, 0.9616, -1.0],
                                       [0.6095, 0.6499, 0.6074, -1.0]]
    assert _r(v["cr"][2, 0, :, 0]) == [0.037, 0.1692, 0.4176, 0.6095]
    assert _r(v["crb"][:, :, :, 0]) == [[[0.589, 0.4914], [0.2532, 0.1603]],
                                        [[0.0826, 0.4418], [0.2953, 0.5224]],
                                        [[0.3801, 0.3886], [0.6169, 0.4308]]]
    assert _r(v["gi"].sum(axis=(1, 2, 3))) == [6.6204, 2.6842]
    assert _r(v["gb"][:3]) == [[4.5056, 1.9693, 1.1324, 3.6942],
                               [0.3678, -1.9643, 1.9336, 1.3484],
                               [-3.5844, 7.0533, -1.2332, -0.1226]]
    assert v["gb"][3:].tolist() == [[0.0] * 4] * 7
    assert v["dr"].sum(axis=(0, 1, 2)).tolist() == [12.0, 8.0, 0.0, 20.0]
    assert v["pidx"].tolist() == [0, 3, 1, 5, 7, 2] and v["pn"] == 6


def test_box_op_shape_errors_are_raised_when_the_graph_is_built():
    """TF's shape functions of the NMS family and ``CropAndResize`` check ranks, the box
    coordinate dimension and that the box counts agree (ValueError when built)."""
    im4 = tf.zeros([2, 8, 10, 1])
    bx = tf.constant([[0.1, 0.1, 0.5, 0.5]] * 3)
    built = {
        "Dimensions must be equal, but are 3 and 2":
            [lambda: tf.image.crop_and_resize(im4, bx, tf.constant([0, 1]), [2, 2]),
             lambda: tf.image.non_max_suppression(bx, [1.0, 2.0], 3),
             lambda: tf.image.non_max_suppression_with_scores(bx, [1.0, 2.0], 3),
             lambda: tf.image.non_max_suppression_padded(bx, [1.0, 2.0], 3),
             lambda: tf.image.non_max_suppression_overlaps(tf.zeros([3, 3]), [1.0, 2.0], 3),
             lambda: tf.image.non_max_suppression_overlaps(tf.zeros([3, 2]), [1.0, 2, 3], 3)],
        "Dimensions must be equal, but are 3 and 4":
            [lambda: tf.image.combined_non_max_suppression(tf.zeros([2, 3, 1, 4]),
                                                           tf.zeros([2, 4, 2]), 3, 4)],
        "Dimension must be 4 but is 3":
            [lambda: tf.image.crop_and_resize(im4, bx[:, :3], tf.constant([0, 1, 1]), [2, 2]),
             lambda: tf.image.non_max_suppression(bx[:, :3], [1.0, 2.0, 3.0], 3),
             lambda: tf.image.combined_non_max_suppression(tf.zeros([2, 3, 1, 3]),
                                                           tf.zeros([2, 3, 3]), 3, 4)],
        "Shape must be rank 4 but is rank 3":
            [lambda: tf.image.crop_and_resize(im4[0], bx, tf.constant([0, 1, 1]), [2, 2])],
        "Shape must be rank 0 but is rank 1":
            [lambda: tf.image.non_max_suppression(bx, [1.0, 2.0, 3.0], [3])],
        "third dimension of boxes must be either 1 or equal to the third dimension of scores":
            [lambda: tf.image.combined_non_max_suppression(tf.zeros([2, 3, 2, 4]),
                                                           tf.zeros([2, 3, 3]), 3, 4)],
    }
    for message, makers in built.items():
        for make in makers:
            with pytest.raises(ValueError, match=message):
                make()

    def ph(value, shape):
        return tf.placeholder_with_default(value, shape)

    run_time = [
        (tf.errors.OutOfRangeError, "box_index has values outside \\[0, batch_size\\)",
         tf.image.crop_and_resize(im4, bx, tf.constant([0, 3, 0]), [2, 2])),
        (tf.errors.OutOfRangeError, "box_index has values outside \\[0, batch_size\\)",
         tf.image.crop_and_resize(im4, bx, tf.constant([0, -1, 0]), [2, 2])),
        (tf.errors.InvalidArgumentError, "box_index has incompatible shape",
         tf.image.crop_and_resize(im4, bx, ph([0, 1], [None]), [2, 2])),
        (tf.errors.InvalidArgumentError, "crop dimensions must be positive",
         tf.image.crop_and_resize(im4, bx, tf.constant([0, 1, 1]), [0, 2])),
        (tf.errors.InvalidArgumentError, "scores has incompatible shape",
         tf.image.non_max_suppression(ph(bx, [None, 4]), ph([1.0, 2.0], [None]), 3)),
        (tf.errors.InvalidArgumentError, "max_output_size must be 0-D, got shape \\[1\\]",
         tf.image.non_max_suppression(bx, [1.0, 2.0, 3.0], ph([3], None))),
        (tf.errors.InvalidArgumentError, "overlaps must be square",
         tf.image.non_max_suppression_overlaps(ph(tf.zeros([3, 2]), None), [1.0, 2, 3], 3)),
        (tf.errors.InvalidArgumentError, "scores has incompatible shape",
         tf.image.combined_non_max_suppression(ph(tf.zeros([2, 3, 1, 4]), None),
                                               tf.zeros([2, 4, 2]), 3, 4)[0]),
        (tf.errors.InvalidArgumentError, "output size must be non-negative",
         tf.image.non_max_suppression(bx, [1.0, 2.0, 3.0], -1)),
    ]
    with tf.Session() as sess:
        for error, message, tensor in run_time:
            with pytest.raises(error, match=message):
                sess.run(tensor)


# -- a tf.data augmentation pipeline and every resize method --------------------------------
def _augment(img, label):
    png = tf.image.encode_png(img)
    dec = tf.image.decode_png(png, channels=3)
    jpg = tf.image.encode_jpeg(dec, quality=90, format="rgb")
    decj = tf.image.decode_jpeg(jpg, channels=3, dct_method="INTEGER_ACCURATE")
    image = tf.image.convert_image_dtype(dec, tf.float32)
    image = tf.image.resize_images(image, [16, 16], method=tf.image.ResizeMethod.BILINEAR,
                                   align_corners=True)
    image = tf.random_crop(image, [12, 12, 3], seed=1)
    image = tf.image.random_flip_left_right(image, seed=2)
    image = tf.image.random_flip_up_down(image, seed=3)
    image = tf.image.random_brightness(image, max_delta=32.0 / 255.0, seed=4)
    image = tf.image.random_saturation(image, lower=0.5, upper=1.5, seed=5)
    image = tf.image.random_hue(image, max_delta=0.2, seed=6)
    image = tf.image.random_contrast(image, lower=0.5, upper=1.5, seed=7)
    image = tf.image.per_image_standardization(tf.clip_by_value(image, 0.0, 1.0))
    image = tf.image.rot90(image, tf.random_uniform([], 0, 4, dtype=tf.int32, seed=8))
    diff = tf.reduce_mean(tf.abs(tf.cast(decj, tf.float32) - tf.cast(dec, tf.float32)))
    return {"image": image, "jpeg_diff": diff}, label


def test_augmentation_pipeline_in_a_dataset_map_with_a_random_rot90():
    rs = np.random.RandomState(0)
    imgs = (rs.rand(6, 10, 12, 3) * 255).astype(np.uint8)
    tf.set_random_seed(11)
    ds = tf.data.Dataset.from_tensor_slices((imgs, np.arange(6, dtype=np.int64)))
    feats, lab = ds.map(_augment).batch(3).make_one_shot_iterator().get_next()
    assert [str(t.shape) for t in (feats["image"], feats["jpeg_diff"], lab)] == [
        "(?, 12, 12, 3)", "(?,)", "(?,)"]
    want = [([0, 1, 2], [0.4738, -1.3696, -1.4582], [47.2417, 46.65, 45.5417]),
            ([3, 4, 5], [1.322, -1.5557, -1.8829], [46.6944, 41.5722, 44.9278])]
    with tf.Session() as sess:
        for labels, corner, jpeg_diff in want:
            f, got = sess.run([feats, lab])
            assert got.tolist() == labels
            assert _r(f["image"][:, 0, 0, 0]) == corner and _r(f["jpeg_diff"]) == jpeg_diff
            np.testing.assert_allclose(f["image"].mean(axis=(1, 2, 3)), 0.0, atol=1e-5)


def test_resize_methods_crops_and_image_metrics_as_tf():
    rs = np.random.RandomState(0)
    imgs = (rs.rand(6, 10, 12, 3) * 255).astype(np.uint8)
    x = tf.constant(imgs[0].astype(np.float32) / 255.0)
    want = {("BILINEAR", False): (51.9148, [0.2755, 0.5827, 0.4149]),
            ("BILINEAR", True): (52.1255, [0.3333, 0.5529, 0.4961]),
            ("NEAREST_NEIGHBOR", False): (53.1176, [0.8039, 0.5686, 0.4039]),
            ("NEAREST_NEIGHBOR", True): (50.8275, [0.0549, 0.4314, 0.3098]),
            ("BICUBIC", False): (51.0386, [0.1695, 0.5962, 0.3544]),
            ("BICUBIC", True): (51.5636, [0.2902, 0.6004, 0.5335]),
            ("AREA", False): (51.259, [0.3835, 0.5397, 0.4832])}
    outs = {}
    for k, (method, corners) in enumerate(want):
        t = tf.image.resize_images(x, [7, 5], method=getattr(tf.image.ResizeMethod, method),
                                   align_corners=corners)
        scope = f"resize_{k}" if k else "resize"
        assert (t.op.type, t.name, str(t.shape)) == ("Squeeze", f"{scope}/Squeeze:0",
                                                     "(7, 5, 3)")
        outs[(method, corners)] = t
    u8 = tf.image.resize_images(tf.constant(imgs[:2]), [5, 7],
                                method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)
    assert (u8.dtype, tf.image.resize_images(tf.constant(imgs[:2]), [5, 7]).dtype) == (
        tf.uint8, tf.float32)
    named = {
        "cc": (tf.image.central_crop(x, 0.5), "central_crop/Slice:0", "(6, 6, 3)"),
        "cc4": (tf.image.central_crop(tf.stack([x, x]), 0.33), "central_crop_1/Slice:0",
                "(2, 4, 4, 3)"),
        "rot": (tf.image.rot90(tf.stack([x, x]), k=3), "rot90/cond/Merge:0", "(2, ?, ?, 3)"),
        "rcp": (tf.image.resize_image_with_crop_or_pad(x, 14, 8),
                "resize_image_with_crop_or_pad/Squeeze:0", "(14, 8, 3)"),
        "tr": (tf.image.transpose_image(x), "transpose/transpose:0", "(12, 10, 3)"),
        "gray": (tf.image.rgb_to_grayscale(x), "rgb_to_grayscale:0", "(10, 12, 1)"),
        "g": (tf.image.adjust_gamma(x, 2.0, 0.5), "adjust_gamma/Identity:0", "(10, 12, 3)"),
    }
    dy, dx = tf.image.image_gradients(x[None])
    named["sob"] = (tf.image.sobel_edges(x[None]), "Reshape_2:0", "(1, 10, 12, 3, 2)")
    named["ps"] = (tf.image.psnr(x, tf.image.adjust_brightness(x, 0.05), max_val=1.0),
                   "PSNR/Identity_3:0", "()")
    for t, name, shape in named.values():
        assert (t.name, str(t.shape)) == (name, shape)
    assert (dy.name, dx.name) == ("Reshape:0", "Reshape_1:0")
    assert named["gray"][0].op.type == "Identity" and named["ps"][0].op.type == "Identity"
    with tf.Session() as sess:
        v = sess.run(outs)
        for key, (total, pixel) in want.items():
            assert (_r(v[key].sum()), _r(v[key][3, 2])) == (total, pixel)
        assert sess.run(u8).sum() == 26544
        v = sess.run({k: t for k, (t, _, _) in named.items()})
        v["dy"], v["dx"] = sess.run([dy, dx])
    sums = {"cc": 52.369, "cc4": 45.561, "rot": 351.49, "rcp": 112.682, "tr": 175.745,
            "gray": 57.833, "g": 57.913, "dy": -3.686, "dx": -3.337, "sob": -29.678,
            "ps": 26.021}
    assert {k: _r(np.sum(v[k]), 3) for k in sums} == sums
    assert _r(v["rot"].ravel()[:3]) == [0.2588, 0.4549, 0.6824]
    assert _r(v["gray"].ravel()[:3]) == [0.6503, 0.4837, 0.7622]


def test_rot90_takes_a_tensor_k_and_builds_tfs_case():
    x = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 4, 3))
    a = tf.image.rot90(x)
    b = tf.image.rot90(tf.stack([x, x]), k=tf.constant(3))
    c = tf.image.rot90(tf.placeholder_with_default(x, None), tf.placeholder(tf.int32, []))
    d = tf.image.rot90(x, k=-1, name="myrot")
    assert [(t.name, t.op.type, str(t.shape)) for t in (a, b, c, d)] == [
        ("rot90/cond/Merge:0", "Merge", "(?, ?, 3)"),
        ("rot90_1/cond/Merge:0", "Merge", "(2, ?, ?, 3)"),
        ("rot90_2/cond/Merge:0", "Merge", "<unknown>"),
        ("myrot/cond/Merge:0", "Merge", "(?, ?, 3)")]
    ops = [op.name for op in tf.get_default_graph().get_operations()
           if op.name.startswith("rot90/")]
    assert ops[:12] == ["rot90/control_dependency", "rot90/k", "rot90/mod/y", "rot90/mod",
                        "rot90/Equal/y", "rot90/Equal", "rot90/Equal_1/y", "rot90/Equal_1",
                        "rot90/Equal_2/y", "rot90/Equal_2", "rot90/preds_c", "rot90/Cast"]
    with tf.Session() as sess:
        assert sess.run(a)[..., 0].tolist() == [[9, 21], [6, 18], [3, 15], [0, 12]]
        assert sess.run(b)[0, ..., 0].tolist() == [[12, 0], [15, 3], [18, 6], [21, 9]]
        assert sess.run(d)[..., 0].tolist() == [[12, 0], [15, 3], [18, 6], [21, 9]]
    with pytest.raises(ValueError, match=r"Shape \(1,\) must have rank 0"):
        tf.image.rot90(x, [1])
    with pytest.raises(ValueError, match=r"'image' \(shape \(4, 3\)\) must be at least "
                                         r"three-dimensional"):
        tf.image.rot90(x[0])
    with pytest.raises(TypeError, match="Expected int32"):
        tf.image.rot90(x, 1.5)


# -- U-Net segmentation -------------------------------------------------------------------
def test_unet_with_transposed_convs_bilinear_skips_weighted_losses_and_mean_iou():
    tf.set_random_seed(3)
    rs = np.random.RandomState(0)
    x_np = rs.rand(2, 16, 16, 3).astype(np.float32)
    y_np = (rs.rand(2, 16, 16) * 3).astype(np.int32)
    x = tf.placeholder(tf.float32, [None, 16, 16, 3], name="x")
    y = tf.placeholder(tf.int32, [None, 16, 16], name="y")
    is_train = tf.placeholder_with_default(True, [], name="is_train")
    init = tf.truncated_normal_initializer(stddev=0.1, seed=1)

    def conv_block(h, n, name):
        with tf.variable_scope(name):
            h = tf.layers.conv2d(h, n, 3, padding="same", kernel_initializer=init, name="c1")
            h = tf.nn.relu(tf.layers.batch_normalization(h, training=is_train, name="bn1"))
            h = tf.layers.conv2d(h, n, 3, padding="same", kernel_initializer=init, name="c2")
            return tf.nn.relu(h)

    c1 = conv_block(x, 4, "down1")
    c2 = conv_block(tf.layers.max_pooling2d(c1, 2, 2), 8, "down2")
    c3 = conv_block(tf.nn.max_pool(c2, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"), 16, "bottom")
    u2 = tf.layers.conv2d_transpose(c3, 8, 2, strides=2, padding="same",
                                    kernel_initializer=init, name="up2")
    c4 = conv_block(tf.concat([u2, c2], axis=-1, name="skip2"), 8, "up2_block")
    w = tf.get_variable("deconv_w", [2, 2, 4, 8], initializer=init)
    out_shape = tf.stack([tf.shape(c4)[0], tf.shape(c4)[1] * 2, tf.shape(c4)[2] * 2, 4])
    u1 = tf.nn.conv2d_transpose(c4, w, out_shape, strides=[1, 2, 2, 1], padding="SAME",
                                name="deconv1")
    assert (u1.name, u1.op.type, str(u1.shape)) == ("deconv1:0", "Conv2DBackpropInput",
                                                    "(?, 16, 16, 4)")
    u1r = tf.image.resize_bilinear(c4, tf.shape(c1)[1:3], align_corners=True,
                                   name="up_bilinear")
    assert (u1r.name, str(u1r.shape)) == ("up_bilinear:0", "(?, ?, ?, 8)")
    c5 = conv_block(tf.concat([u1, c1, u1r[..., :2]], 3), 4, "up1_block")
    logits = tf.layers.conv2d(c5, 3, 1, kernel_initializer=init, name="logits")
    onehot = tf.one_hot(y, 3)
    pix_w = tf.reduce_sum(onehot * tf.constant([0.2, 1.0, 2.0]), axis=-1)
    ce = tf.nn.softmax_cross_entropy_with_logits_v2(labels=onehot, logits=logits)
    assert (ce.name, str(ce.shape)) == ("softmax_cross_entropy_with_logits/Reshape_2:0",
                                        "(?, 16, 16)")
    loss1 = tf.reduce_mean(ce * pix_w)
    loss2 = tf.losses.sparse_softmax_cross_entropy(y, logits, weights=pix_w)
    loss3 = tf.reduce_mean(tf.nn.weighted_cross_entropy_with_logits(
        targets=tf.reshape(onehot, [-1, 3]), logits=tf.reshape(logits, [-1, 3]),
        pos_weight=2.0))
    probs = tf.nn.softmax(logits)
    inter = tf.reduce_sum(probs * onehot, axis=[1, 2])
    dice = 1 - tf.reduce_mean((2 * inter + 1) / (tf.reduce_sum(probs, [1, 2])
                                                 + tf.reduce_sum(onehot, [1, 2]) + 1))
    pred = tf.argmax(logits, axis=-1, output_type=tf.int32)
    miou, miou_up = tf.metrics.mean_iou(y, pred, 3)
    acc, acc_up = tf.metrics.accuracy(y, pred, weights=pix_w)
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train = tf.train.AdamOptimizer(1e-2).minimize(loss2 + 0.5 * dice)
    assert (loss2.name, loss2.op.type, miou.name, miou.op.type, acc.name) == (
        "sparse_softmax_cross_entropy_loss/value:0", "DivNoNan", "mean_iou/Select_1:0",
        "Select", "accuracy/value:0")
    assert len(tf.trainable_variables()) == 35 and len(update_ops) == 10
    assert [v.name for v in tf.local_variables()] == [
        "mean_iou/total_confusion_matrix:0", "accuracy/total:0", "accuracy/count:0"]
    want = [[1.1589, 1.1589, 0.924, 0.6634], [1.1243, 1.1243, 0.9204, 0.661],
            [1.0849, 1.0849, 0.917, 0.6584], [1.0432, 1.0432, 0.9145, 0.6559]]
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        feed = {x: x_np, y: y_np}
        np.testing.assert_allclose(sess.run(u1, feed).sum(), 42.4192, atol=2e-4)
        np.testing.assert_allclose(sess.run(u1r, feed).sum(), 887.3789, atol=1e-3)
        for step in want:
            got = sess.run([loss1, loss2, loss3, dice, train], feed)[:4]
            np.testing.assert_allclose(got, step, atol=2e-4)
        sess.run([miou_up, acc_up], {x: x_np, y: y_np, is_train: False})
        assert (_r(sess.run(miou)), _r(sess.run(acc))) == (0.1165, 0.6535)
        moving = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, "down1/bn1/moving_mean")[0]
        np.testing.assert_allclose(sess.run(moving), [0.0056, 0.0085, 0.0017, 0.0002],
                                   atol=2e-4)


def test_mean_iou_is_tfs_select_over_the_valid_classes():
    labels = tf.constant([0, 0, 1, 1, 2])
    value, update = tf.metrics.mean_iou(labels, tf.constant([0, 1, 1, 1, 0]), 4)
    assert (value.name, value.op.type, update.name) == (
        "mean_iou/Select_1:0", "Select", "mean_iou/AssignAdd:0")
    graph = tf.get_default_graph()
    assert graph.get_tensor_by_name("mean_iou/mean_iou:0").op.type == "Sum"
    assert graph.get_tensor_by_name("mean_iou/DiagPart:0").op.type == "DiagPart"
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(value) == 0.0  # no class seen yet
        sess.run(update)
        assert _r(sess.run(value)) == 0.3333  # (1/3 + 2/3 + 0) / 3: class 3 left out


# -- neural style transfer (Gatys et al.) ---------------------------------------------------
def test_style_transfer_gram_matrices_total_variation_and_clipped_image():
    rs = np.random.RandomState(0)
    content = rs.rand(1, 16, 16, 3).astype(np.float32) * 255
    style = rs.rand(1, 16, 16, 3).astype(np.float32) * 255
    mean = np.array([123.68, 116.779, 103.939], np.float32)
    weights = {n: (rs.randn(3, 3, ci, co) * 0.2).astype(np.float32)
               for n, ci, co in [("c11", 3, 4), ("c12", 4, 4), ("c21", 4, 8)]}

    def vgg(img):
        net, h = {}, img - mean
        for n in ["c11", "c12"]:
            h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, tf.constant(weights[n]),
                                                       [1, 1, 1, 1], "SAME"),
                                          tf.zeros([weights[n].shape[3]])))
            net[n] = h
        h = tf.nn.avg_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        net["c21"] = tf.nn.relu(tf.nn.conv2d(h, tf.constant(weights["c21"]),
                                             strides=(1, 1, 1, 1), padding="SAME"))
        return net

    def gram(f):
        _, hh, ww, c = f.get_shape().as_list()
        feats = tf.reshape(f, [-1, c])
        return tf.matmul(feats, feats, transpose_a=True) / (hh * ww * c)

    def gram_batched(f):
        shape = tf.shape(f)
        feats = tf.reshape(f, tf.stack([shape[0], shape[1] * shape[2], shape[3]]))
        return tf.matmul(feats, feats, adjoint_a=True) / tf.cast(
            shape[1] * shape[2] * shape[3], tf.float32)

    style_grams = {k: gram(v) for k, v in vgg(tf.constant(style)).items()}
    content_net = vgg(tf.constant(content))
    tf.set_random_seed(1)
    img = tf.Variable(tf.random_normal([1, 16, 16, 3], seed=2) * 0.256 * 50 + content,
                      name="image")
    net = vgg(img)
    content_loss = 2 * tf.nn.l2_loss(net["c12"] - content_net["c12"]) / tf.cast(
        tf.size(content_net["c12"]), tf.float32)
    style_loss = tf.add_n([tf.nn.l2_loss(gram(net[k]) - style_grams[k])
                           / style_grams[k].get_shape().num_elements() for k in ["c11", "c21"]])
    batched = gram_batched(net["c21"])
    tv = tf.image.total_variation(img)
    tv_y = tf.nn.l2_loss(img[:, 1:, :, :] - img[:, :15, :, :])
    loss = 7.5 * content_loss + 100 * style_loss + 1e-4 * tf.reduce_sum(tv)
    assert (str(gram(net["c11"]).shape), str(batched.shape), batched.op.type) == (
        "(4, 4)", "(1, 8, 8)", "RealDiv")
    assert (tv.name, str(tv.shape), str(loss.shape)) == ("total_variation/add:0", "(1,)", "()")
    train = tf.train.AdamOptimizer(1.0, beta1=0.9, beta2=0.999, epsilon=1e-08).minimize(
        loss, var_list=[img])
    clip = img.assign(tf.clip_by_value(img, 0.0, 255.0))
    tv_grad = tf.gradients(tv, img)[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([content_loss, style_loss, tv[0], tv_y])
        np.testing.assert_allclose(got, [51.84, 5503.09, 127827.67, 4307707.5], rtol=1e-4)
        assert _r(sess.run(batched)[0, :2, :2], 3) == [[1.158, 2.787], [2.787, 180.6]]
        assert sess.run(tv_grad)[0, :2, :2, 0].tolist() == [[0.0, 3.0], [-3.0, 2.0]]
        losses = []
        for _ in range(5):
            losses.append(sess.run([train, loss])[1])
            sess.run(clip)
        np.testing.assert_allclose(losses, [550710.88, 443554.53, 345956.53, 263845.69,
                                            197038.42], rtol=2e-6)
        out = sess.run(img)
        assert _r(out.mean(), 3) == 127.791 and _r(out[0, 0, 0], 3) == [131.44, 194.845,
                                                                         174.462]
        assert len(sess.run(tf.image.encode_png(tf.cast(tf.clip_by_value(img[0], 0, 255),
                                                        tf.uint8)))) > 100


# -- MobileNet v1 (slim) and v2 inverted residuals ---------------------------------------------
def test_mobilenet_depthwise_separable_relu6_and_slim_train_op():
    slim = tf.contrib.slim
    rs = np.random.RandomState(0)
    x_np = rs.rand(2, 16, 16, 3).astype(np.float32)
    tf.set_random_seed(5)
    x = tf.placeholder(tf.float32, [None, 16, 16, 3])
    y = tf.placeholder(tf.int64, [None])
    training = tf.placeholder_with_default(False, [])
    with tf.variable_scope("MobilenetV1", "MobilenetV1", [x]):
        with slim.arg_scope([slim.conv2d, slim.separable_conv2d], padding="SAME",
                            weights_initializer=tf.truncated_normal_initializer(stddev=0.09,
                                                                                seed=1),
                            weights_regularizer=slim.l2_regularizer(4e-5),
                            normalizer_fn=None, activation_fn=tf.nn.relu6):
            net = slim.conv2d(x, 8, [3, 3], stride=2, scope="Conv2d_0")
            for i, (stride, depth) in enumerate([(1, 16), (2, 16)]):
                net = slim.separable_conv2d(net, None, [3, 3], depth_multiplier=1,
                                            stride=stride, scope=f"Conv2d_{i + 1}_depthwise")
                net = slim.conv2d(net, depth, [1, 1], stride=1,
                                  scope=f"Conv2d_{i + 1}_pointwise")
            net = slim.separable_conv2d(net, 16, [3, 3], depth_multiplier=2, rate=2,
                                        scope="Conv2d_3_sep")
            net = tf.reduce_mean(net, [1, 2], keep_dims=True, name="global_pool")
            net = slim.dropout(net, keep_prob=0.999, is_training=training, scope="Dropout_1b")
            logits = slim.conv2d(net, 5, [1, 1], activation_fn=None, normalizer_fn=None,
                                 scope="Conv2d_1c_1x1")
            logits = tf.squeeze(logits, [1, 2], name="SpatialSqueeze")

    def inverted_residual(h, expand, out_c, stride, name):
        with tf.variable_scope(name):
            c = h.get_shape().as_list()[-1]
            w1 = tf.get_variable("expand", [1, 1, c, c * expand],
                                 initializer=tf.glorot_normal_initializer(seed=3))
            e = tf.nn.relu6(tf.layers.batch_normalization(
                tf.nn.conv2d(h, w1, [1, 1, 1, 1], "SAME"), training=training, fused=True))
            dw = tf.get_variable("depthwise", [3, 3, c * expand, 1],
                                 initializer=tf.glorot_uniform_initializer(seed=4))
            d = tf.nn.relu6(tf.nn.depthwise_conv2d(e, dw, [1, stride, stride, 1], "SAME",
                                                   rate=[1, 1]))
            w2 = tf.get_variable("project", [1, 1, c * expand, out_c],
                                 initializer=tf.glorot_normal_initializer(seed=5))
            p = tf.nn.conv2d(d, w2, [1, 1, 1, 1], "SAME")
            return tf.add(p, h, name="residual") if stride == 1 and c == out_c else p

    h2 = inverted_residual(inverted_residual(x, 4, 3, 1, "ir1"), 2, 6, 2, "ir2")
    dil = tf.nn.depthwise_conv2d(x, tf.ones([3, 3, 3, 2]) / 9, [1, 1, 1, 1], "VALID",
                                 rate=[2, 2], name="dil")
    sep = tf.nn.separable_conv2d(x, tf.ones([3, 3, 3, 2]) / 9, tf.ones([1, 1, 6, 4]),
                                 [1, 1, 1, 1], "SAME", rate=[2, 2], name="sep")
    lsep = tf.layers.separable_conv2d(x, 4, 3, strides=2, depth_multiplier=2, padding="same",
                                      depthwise_initializer=tf.ones_initializer(),
                                      pointwise_initializer=tf.constant_initializer(0.1),
                                      name="lsep")
    native = tf.nn.depthwise_conv2d_native(x, tf.ones([2, 2, 3, 1]), [1, 2, 2, 1], "SAME")
    assert [(t.name, str(t.shape)) for t in (logits, h2, dil, sep, lsep, native)] == [
        ("MobilenetV1/SpatialSqueeze:0", "(?, 5)"), ("ir2/Conv2D_1:0", "(?, 8, 8, 6)"),
        ("dil/BatchToSpaceND:0", "(?, 12, 12, 6)"), ("sep:0", "(?, 16, 16, 4)"),
        ("lsep/BiasAdd:0", "(?, 8, 8, 4)"), ("DepthwiseConv2dNative:0", "(?, 8, 8, 3)")]
    ops = [op.name for op in tf.get_default_graph().get_operations()]
    assert [n for n in ops if n.startswith("dil")] == [
        "dil/Shape", "dil/dilation_rate", "dil/required_space_to_batch_paddings/input_shape",
        "dil/required_space_to_batch_paddings/base_paddings",
        "dil/required_space_to_batch_paddings/paddings",
        "dil/required_space_to_batch_paddings/crops", "dil/SpaceToBatchND/block_shape",
        "dil/SpaceToBatchND/paddings", "dil/SpaceToBatchND", "dil",
        "dil/BatchToSpaceND/block_shape", "dil/BatchToSpaceND/crops", "dil/BatchToSpaceND"]
    assert [n for n in ops if n.startswith("sep")][-6:] == [
        "sep/SpaceToBatchND", "sep/depthwise", "sep/BatchToSpaceND/block_shape",
        "sep/BatchToSpaceND/crops", "sep/BatchToSpaceND", "sep"]
    assert sorted(v.name for v in tf.global_variables()
                  if "Conv2d_1_depthwise" in v.name or "Conv2d_3_sep" in v.name) == [
        "MobilenetV1/Conv2d_1_depthwise/biases:0",
        "MobilenetV1/Conv2d_1_depthwise/depthwise_weights:0",
        "MobilenetV1/Conv2d_3_sep/biases:0", "MobilenetV1/Conv2d_3_sep/depthwise_weights:0",
        "MobilenetV1/Conv2d_3_sep/pointwise_weights:0"]
    reg = tf.losses.get_regularization_losses()
    assert (len(reg), reg[0].name) == (8, "MobilenetV1/Conv2d_0/kernel/Regularizer/"
                                          "l2_regularizer:0")
    assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 4
    loss = (tf.losses.sparse_softmax_cross_entropy(y, logits) + tf.add_n(reg)
            + 0.01 * tf.reduce_mean(h2 ** 2))
    total = tf.losses.get_total_loss()
    opt = tf.train.RMSPropOptimizer(0.01, decay=0.9, momentum=0.9, epsilon=1.0)
    train_op = slim.learning.create_train_op(loss, opt, summarize_gradients=False)
    assert (train_op.name, total.name) == ("train_op/control_dependency:0", "total_loss:0")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert np.abs(sess.run(logits, {x: x_np})).max() < 5e-5
        sums = [np.sum(a) for a in sess.run([dil, sep, lsep, native, h2], {x: x_np})]
        np.testing.assert_allclose(sums, [871.157, 5198.071, 1262.3, 773.169, -5.148],
                                   atol=2e-3)
        want = [(1.6114, 1.6075), (1.6093, 1.6032), (1.605, 1.5972), (1.599, 1.5894)]
        for step, step_total in want:
            got = sess.run(train_op, {x: x_np, y: [1, 3], training: True})
            np.testing.assert_allclose([got, sess.run(total, {x: x_np, y: [1, 3]})],
                                       [step, step_total], atol=1e-4)
        moving = next(v for v in tf.global_variables()
                      if v.name == "ir1/batch_normalization/moving_mean:0")
        np.testing.assert_allclose(sess.run(moving), [
            -0.0009, 0.0075, -0.0066, 0.0178, -0.004, 0.0203, 0.0008, 0.0141, -0.0023, 0.0001,
            -0.0023, 0.0177], atol=1e-4)


def test_non_max_suppression_padded_takes_batches_of_images():
    rs = np.random.RandomState(0)
    b = rs.rand(2, 3, 8, 4).astype(np.float32)
    b[..., 2:] += b[..., :2]
    s = rs.rand(2, 3, 8).astype(np.float32)
    idx, nv = tf.image.non_max_suppression_padded(tf.constant(b), tf.constant(s), 4,
                                                  iou_threshold=0.2,
                                                  pad_to_max_output_size=True)
    assert (str(idx.shape), str(nv.shape), idx.op.type) == ("(2, 3, 4)", "(2, 3)", "Reshape")
    one = tf.image.non_max_suppression_padded(b[0, 0], s[0, 0], 4, iou_threshold=0.2,
                                              pad_to_max_output_size=True)
    unpadded = tf.image.non_max_suppression_padded(b[0, 0], s[0, 0], 4, iou_threshold=0.2)
    scored = tf.image.non_max_suppression_padded(b[0, 1], s[0, 1], 6, iou_threshold=0.5,
                                                 score_threshold=0.3,
                                                 pad_to_max_output_size=True)
    fed = tf.placeholder(tf.float32, None)
    unknown = tf.image.non_max_suppression_padded(fed, s, 4, iou_threshold=0.2,
                                                  pad_to_max_output_size=True)
    assert [(str(t[0].shape), t[0].op.type) for t in (one, unpadded, scored, unknown)] == [
        ("(4,)", "Reshape"), ("(?,)", "StridedSlice"), ("(6,)", "Reshape"),
        ("<unknown>", "Reshape")]
    want = [[[1, 2, 3, 5], [1, 6, 7, 2], [2, 1, 7, 4]],
            [[5, 3, 7, 4], [1, 4, 5, 2], [7, 0, 5, 3]]]
    with tf.Session() as sess:
        got, valid = sess.run([idx, nv])
        assert got.tolist() == want and valid.tolist() == [[4, 4, 4], [4, 4, 4]]
        assert sess.run(unknown[0], {fed: b}).tolist() == want
        v = sess.run([one, unpadded, scored])
    assert [(i.tolist(), int(n)) for i, n in v] == [
        ([1, 2, 3, 5], 4), ([1, 2, 3, 5], 4), ([1, 6, 7, 2, 0, 0], 5)]
    with pytest.raises(ValueError, match=r"'pad_to_max_output_size' \(value False\) must be "
                                         r"True for batched input"):
        tf.image.non_max_suppression_padded(b, s, 4)


def test_ssim_and_ms_ssim_build_tfs_graph():
    rs = np.random.RandomState(0)
    a = rs.rand(2, 24, 20, 3).astype(np.float32)
    b = np.clip(a + rs.randn(2, 24, 20, 3).astype(np.float32) * 0.1, 0, 1)
    x, y = tf.constant(a), tf.constant(b)
    s1 = tf.image.ssim(x, y, max_val=1.0, filter_size=5)
    s2 = tf.image.ssim(x[0], y[0], 1.0, filter_size=3, filter_sigma=0.8, return_index_map=True)
    u8 = tf.image.ssim(tf.constant((a * 255).astype(np.uint8)),
                       tf.constant((b * 255).astype(np.uint8)), 255, filter_size=5)
    big = rs.rand(1, 180, 170, 1).astype(np.float32)
    m1 = tf.image.ssim_multiscale(tf.constant(big), tf.constant(np.clip(big * 0.8 + 0.1, 0, 1)),
                                  1.0)
    m2 = tf.image.ssim_multiscale(x, y, 1.0, power_factors=(0.5, 0.5), filter_size=3)
    assert [(t.name, t.op.type, str(t.shape)) for t in (s1, s2, u8, m1, m2)] == [
        ("SSIM/Mean_2:0", "Mean", "(2,)"), ("SSIM_1/Mean:0", "Mean", "(22, 18)"),
        ("SSIM_2/Mean_2:0", "Mean", "(2,)"), ("MS-SSIM/Mean:0", "Mean", "(1,)"),
        ("MS-SSIM_1/Mean:0", "Mean", "(2,)")]
    grad = tf.gradients(s1, x)[0]
    with tf.Session() as sess:
        v = sess.run([s1, s2, u8, m1, m2, grad])
    assert (_r(v[0]), _r(v[1].sum()), _r(v[2]), _r(v[3]), _r(v[4]), _r(v[5].sum())) == (
        [0.9485, 0.9466], 372.1628, [0.9485, 0.9466], [0.9803], [0.9404, 0.9363], -0.0139)
    with pytest.raises(ValueError):
        tf.image.ssim(x, y, 1.0, filter_size=30)  # a window larger than the image


# -- slim's inception preprocessing and official resnet's imagenet preprocessing ---------------
def _apply_with_random_selector(x, func, num_cases):
    from flowgraph.python.ops import control_flow_ops  # tensorflow.python.ops.control_flow_ops

    sel = tf.random_uniform([], maxval=num_cases, dtype=tf.int32, seed=21)
    return control_flow_ops.merge([
        func(control_flow_ops.switch(x, tf.equal(sel, case))[1], case)
        for case in range(num_cases)])[0]


def _distort_color(image, color_ordering):
    with tf.name_scope(None, "distort_color", [image]):
        if color_ordering % 2 == 0:
            image = tf.image.random_brightness(image, max_delta=32.0 / 255.0, seed=31)
            image = tf.image.random_saturation(image, lower=0.5, upper=1.5, seed=32)
        else:
            image = tf.image.random_saturation(image, lower=0.5, upper=1.5, seed=33)
            image = tf.image.random_brightness(image, max_delta=32.0 / 255.0, seed=34)
        return tf.clip_by_value(image, 0.0, 1.0)


def _inception_train(image, height, width, bbox):
    with tf.name_scope(None, "distort_image", [image, height, width, bbox]):
        image = tf.image.convert_image_dtype(image, dtype=tf.float32)
        image_with_box = tf.image.draw_bounding_boxes(tf.expand_dims(image, 0), bbox)
        with tf.name_scope(None, "distorted_bounding_box_crop", [image, bbox]):
            begin, size, _ = tf.image.sample_distorted_bounding_box(
                tf.shape(image), bounding_boxes=bbox, min_object_covered=0.1,
                aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 1.0), max_attempts=100,
                use_image_if_no_bounding_boxes=True, seed=41)
            distorted = tf.slice(image, begin, size)
        distorted.set_shape([None, None, 3])
        distorted = _apply_with_random_selector(
            distorted, lambda x, method: tf.image.resize_images(x, [height, width], method),
            num_cases=4)
        distorted = tf.image.random_flip_left_right(distorted, seed=51)
        distorted = _apply_with_random_selector(distorted, _distort_color, num_cases=4)
        return tf.multiply(tf.subtract(distorted, 0.5), 2.0), image_with_box


def _inception_eval(image, height, width):
    with tf.name_scope(None, "eval_image", [image, height, width]):
        image = tf.image.convert_image_dtype(image, dtype=tf.float32)
        image = tf.image.central_crop(image, central_fraction=0.875)
        image = tf.image.resize_bilinear(tf.expand_dims(image, 0), [height, width],
                                         align_corners=False)
        return tf.multiply(tf.subtract(tf.squeeze(image, [0]), 0.5), 2.0)


def _aspect_preserving_resize(image, resize_min):
    shape = tf.shape(input=image)
    height, width = tf.cast(shape[0], tf.float32), tf.cast(shape[1], tf.float32)
    scale_ratio = tf.cast(resize_min, tf.float32) / tf.minimum(height, width)
    new_height = tf.cast(height * scale_ratio, tf.int32)
    new_width = tf.cast(width * scale_ratio, tf.int32)
    return tf.image.resize_images(image, [new_height, new_width],
                                  method=tf.image.ResizeMethod.BILINEAR, align_corners=False)


def _central_crop(image, crop_height, crop_width):
    shape = tf.shape(input=image)
    crop_top = (shape[0] - crop_height) // 2
    crop_left = (shape[1] - crop_width) // 2
    return tf.slice(image, [crop_top, crop_left, 0], [crop_height, crop_width, -1])


def test_inception_and_imagenet_preprocessing_with_switch_merge_selectors():
    tf.set_random_seed(9)
    raw = (np.random.RandomState(0).rand(20, 24, 3) * 255).astype(np.uint8)
    jpeg = tf.image.encode_jpeg(tf.constant(raw), quality=95)
    img = tf.image.decode_png(tf.image.encode_png(tf.constant(raw)), channels=3)
    bbox = tf.constant([[[0.1, 0.2, 0.9, 0.8]]])
    train, boxed = _inception_train(img, 8, 8, bbox)
    evaluated = _inception_eval(img, 8, 8)
    assert [(t.name, str(t.shape)) for t in (train, boxed, evaluated)] == [
        ("distort_image/Mul:0", "(8, 8, 3)"), ("distort_image/DrawBoundingBoxes:0",
                                                "(1, ?, ?, 3)"),
        ("eval_image/Mul:0", "(8, 8, 3)")]
    types = {op.type for op in tf.get_default_graph().get_operations()
             if op.name.startswith("distort_image/")}
    assert sorted(types) == [
        "AddV2", "AdjustSaturation", "Cast", "Const", "DrawBoundingBoxes", "Equal",
        "ExpandDims", "Identity", "Less", "Maximum", "Merge", "Minimum", "Mul", "RandomUniform",
        "RandomUniformInt",
        "ResizeArea", "ResizeBicubic", "ResizeBilinear", "ResizeNearestNeighbor", "ReverseV2",
        "SampleDistortedBoundingBoxV2", "Shape", "Slice", "Squeeze", "Sub", "Switch"]
    # official resnet: crop window from the JPEG's header, decode_and_crop_jpeg, flip
    begin, size, _ = tf.image.sample_distorted_bounding_box(
        tf.image.extract_jpeg_shape(jpeg), bounding_boxes=bbox, min_object_covered=0.1,
        aspect_ratio_range=[0.75, 1.33], area_range=[0.05, 1.0], max_attempts=100,
        use_image_if_no_bounding_boxes=True, seed=61)
    offset_y, offset_x, _ = tf.unstack(begin)
    target_height, target_width, _ = tf.unstack(size)
    crop_window = tf.stack([offset_y, offset_x, target_height, target_width])
    cropped = tf.image.random_flip_left_right(
        tf.image.decode_and_crop_jpeg(jpeg, crop_window, channels=3), seed=62)
    cropped = tf.image.resize_images(cropped, [8, 8], method=tf.image.ResizeMethod.BILINEAR,
                                     align_corners=False)
    cropped.set_shape([8, 8, 3])
    cropped = cropped - tf.expand_dims(tf.expand_dims([123.68, 116.78, 103.94], 0), 0)
    resized = _central_crop(_aspect_preserving_resize(img, 10), 8, 8)
    resized.set_shape([8, 8, 3])
    assert (cropped.name, resized.name, resized.dtype) == ("sub:0", "Slice:0", tf.float32)
    want = [(-36.16, [-1.0, 0.278, -0.942]), (5.64, [0.41, 0.886, -0.821])]
    with tf.Session() as sess:
        for train_sum, corner in want:
            v = sess.run([train, boxed, evaluated, cropped, resized])
            assert (_r(v[0].sum(), 2), _r(v[0][0, 0], 3)) == (train_sum, corner)
            assert (_r(v[1].sum(), 2), _r(v[2].sum(), 2), _r(v[4].sum(), 2)) == (
                743.67, -3.69, 24271.0)
            assert v[3].shape == (8, 8, 3)  # JPEG pixels are Pillow's, not libjpeg's


def test_random_flips_are_tfs_cond_for_an_image_and_blend_for_a_batch():
    x = tf.constant(np.arange(8 * 2 * 3, dtype=np.float32).reshape(8, 2, 3, 1))
    tf.set_random_seed(1)
    lr = tf.image.random_flip_left_right(x, seed=3)
    ud = tf.image.random_flip_up_down(x, seed=4)
    one = tf.image.random_flip_left_right(x[0], seed=5)
    u8 = tf.image.random_flip_left_right(tf.cast(x, tf.uint8), seed=3)
    assert [(t.name, t.op.type, str(t.shape), t.dtype) for t in (lr, ud, one, u8)] == [
        ("random_flip_left_right/add:0", "AddV2", "(8, 2, 3, 1)", tf.float32),
        ("random_flip_up_down/add:0", "AddV2", "(8, 2, 3, 1)", tf.float32),
        ("random_flip_left_right_1/Merge:0", "Merge", "(2, 3, 1)", tf.float32),
        ("random_flip_left_right_2/add:0", "AddV2", "(8, 2, 3, 1)", tf.uint8)]
    names = [op.name for op in tf.get_default_graph().get_operations()
             if op.name.startswith("random_flip_left_right_1/")]
    assert names[:6] == ["random_flip_left_right_1/control_dependency",
                         "random_flip_left_right_1/random_uniform/shape",
                         "random_flip_left_right_1/random_uniform/min",
                         "random_flip_left_right_1/random_uniform/max",
                         "random_flip_left_right_1/random_uniform/RandomUniform",
                         "random_flip_left_right_1/random_uniform/Mul"]
    with tf.Session() as sess:
        a, b, c, d = sess.run([lr, ud, one, u8])
    # a batch image is flipped when its draw rounds to 1 (TF's blend), not below 1/2
    assert a[:, 0, 0, 0].tolist() == [2, 8, 14, 18, 26, 30, 38, 44]
    assert b[:, 0, 0, 0].tolist() == [0, 6, 12, 18, 27, 33, 36, 45]
    assert c[0, :, 0].tolist() == [2, 1, 0] and d[:, 0, 0, 0].tolist() == a[:, 0, 0, 0].tolist()


def test_resize_bilinear_rounds_in_float32_as_tfs_kernel():
    imgs = (np.random.RandomState(0).rand(2, 10, 12, 3) * 255).astype(np.uint8)
    legacy = tf.image.resize_bilinear(imgs, [5, 7])
    half = tf.image.resize_bilinear(imgs, [5, 7], half_pixel_centers=True)
    with tf.Session() as sess:
        a, b = sess.run([legacy, half])
    # TF 2.15's float32 values, bit for bit (a float64 interpolation rounds some last bits
    # the other way: 143.28572 and 121.42857 here)
    assert a.ravel()[:6].tolist() == np.float32(
        [139.0, 182.0, 153.0, 118.71429, 193.0, 221.85715]).tolist()
    assert b.ravel()[:6].tolist() == np.float32(
        [150.35715, 144.5, 175.42857, 143.2857, 121.428566, 198.60715]).tolist()
    np.testing.assert_allclose(float(a.astype(np.float64).sum()), 26181.428510665894,
                               rtol=1e-12)
    np.testing.assert_allclose(float(b.astype(np.float64).sum()), 26315.500116348267,
                               rtol=1e-12)


def test_central_crop_builds_tfs_graph():
    x = tf.constant(np.arange(2 * 9 * 10 * 3, dtype=np.float32).reshape(2, 9, 10, 3))
    a = tf.image.central_crop(x[0], 0.5)
    b = tf.image.central_crop(x, 0.33)
    c = tf.image.central_crop(tf.placeholder_with_default(x[0], [None, 10, 3]), 0.6)
    ops = [(op.name, op.type) for op in tf.get_default_graph().get_operations()
           if op.name.startswith("central_crop")]
    assert ops[:4] == [("central_crop/control_dependency", "Identity"),
                       ("central_crop/stack", "Const"), ("central_crop/stack_1", "Const"),
                       ("central_crop/Slice", "Slice")]
    dynamic = [n for n, _ in ops if n.startswith("central_crop_2/")]
    assert dynamic[-18:-10] == ["central_crop_2/Cast", "central_crop_2/Cast_1/x",
                                "central_crop_2/Cast_1", "central_crop_2/mul",
                                "central_crop_2/sub", "central_crop_2/truediv/y",
                                "central_crop_2/truediv", "central_crop_2/Cast_2"]
    assert [(t.name, str(t.shape)) for t in (a, b, c)] == [
        ("central_crop/Slice:0", "(5, 6, 3)"), ("central_crop_1/Slice:0", "(2, 3, 4, 3)"),
        ("central_crop_2/Slice:0", "(?, 6, 3)")]
    with tf.Session() as sess:
        assert [float(v.sum()) for v in sess.run([a, b, c])] == [12105.0, 19404.0, 16947.0]


# -- DeepLab-style ASPP segmentation -----------------------------------------------------------
def test_deeplab_aspp_with_atrous_convs_image_pooling_and_ignored_labels():
    tf.set_random_seed(4)
    rs = np.random.RandomState(0)
    x_np = rs.rand(2, 17, 17, 3).astype(np.float32)
    y_np = (rs.rand(2, 17, 17) * 4).astype(np.int64)
    x = tf.placeholder(tf.float32, [None, None, None, 3])
    y = tf.placeholder(tf.int64, [None, None, None])
    init = tf.variance_scaling_initializer(seed=3)
    feat = tf.layers.conv2d(x, 8, 3, strides=2, padding="same", kernel_initializer=init,
                            activation=tf.nn.relu)
    a1 = tf.nn.atrous_conv2d(feat, tf.get_variable("atrous_w", [3, 3, 8, 8], initializer=init),
                             rate=2, padding="SAME")
    a2 = tf.layers.conv2d(feat, 8, 3, dilation_rate=3, padding="same", kernel_initializer=init,
                          name="aspp_r3")
    pool = tf.reduce_mean(feat, [1, 2], keepdims=True, name="image_pooling")
    pool = tf.layers.conv2d(pool, 8, 1, kernel_initializer=init, name="pool_conv")
    pool = tf.image.resize_bilinear(pool, tf.shape(feat)[1:3], align_corners=True)
    aspp = tf.concat([a1, a2, pool], axis=3, name="aspp_concat")
    logits = tf.layers.conv2d(aspp, 4, 1, kernel_initializer=init, name="logits")
    up = tf.image.resize_bilinear(logits, tf.shape(x)[1:3], align_corners=True, name="upsample")
    up2 = tf.image.resize(logits, tf.shape(x)[1:3], method="bilinear")
    assert [(t.name, str(t.shape)) for t in (a1, aspp, up, up2)] == [
        ("convolution/BatchToSpaceND:0", "(?, ?, ?, 8)"), ("aspp_concat:0", "(?, ?, ?, 24)"),
        ("upsample:0", "(?, ?, ?, 4)"), ("resize/ResizeBilinear:0", "(?, ?, ?, 4)")]
    valid = tf.cast(tf.not_equal(y, 3), tf.float32)  # label 3 is "ignore"
    loss = tf.losses.softmax_cross_entropy(tf.one_hot(y, 4), up, weights=valid,
                                           label_smoothing=0.1)
    loss_s = tf.losses.sparse_softmax_cross_entropy(tf.reshape(y, [-1]),
                                                    tf.reshape(up, [-1, 4]),
                                                    weights=tf.reshape(valid, [-1]))
    pred = tf.argmax(up, 3)
    mpca, mpca_up = tf.metrics.mean_per_class_accuracy(y, pred, 4, weights=valid)
    miou, miou_up = tf.metrics.mean_iou(y, pred, 4, weights=valid)
    train = tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True).minimize(loss)
    assert (loss.name, loss_s.name, mpca.name, mpca_up.name) == (
        "softmax_cross_entropy_loss/value:0", "sparse_softmax_cross_entropy_loss/value:0",
        "mean_accuracy/mean_accuracy:0", "mean_accuracy/update_op:0")
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        feed = {x: x_np, y: y_np}
        assert (_r(sess.run(up, feed).sum()), _r(sess.run(up2, feed).sum())) == (-168.6221,
                                                                                 -175.5107)
        for want in ([1.5574, 1.5528], [1.4328, 1.4269], [1.3666, 1.3591]):
            assert _r(sess.run([loss, loss_s, train], feed)[:2]) == want
        sess.run([mpca_up, miou_up], feed)
        assert (_r(sess.run(mpca)), _r(sess.run(miou))) == (0.254, 0.1651)


def test_resize_image_with_crop_or_pad_tensor_targets_wait_for_the_checks():
    x = tf.constant(np.arange(2 * 9 * 10 * 3, dtype=np.float32).reshape(2, 9, 10, 3))
    out = tf.image.resize_image_with_crop_or_pad(x, tf.constant(5), tf.constant(13))
    assert (out.name, str(out.shape)) == (
        "resize_image_with_crop_or_pad/control_dependency_3:0", "(2, 5, 13, 3)")
    top = [op.name.split("/")[1] for op in tf.get_default_graph().get_operations()
           if op.name.count("/") == 1 and op.name.startswith("resize_image_with_crop_or_pad/")]
    assert top[:9] == ["Greater", "Greater_1", "control_dependency", "control_dependency_1",
                       "control_dependency_2", "sub", "Neg", "floordiv", "Maximum"]
    with tf.Session() as sess:
        got = sess.run(out)
    assert float(got.sum()) == 80850.0 and got[1, 2, :4, 0].tolist() == [0, 390, 393, 396]
