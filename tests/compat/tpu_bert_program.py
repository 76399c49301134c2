"""A BERT-style TF1 program (Google's run_classifier.py, shrunk): run it unchanged on
TensorFlow 2.15 (``tensorflow.compat.v1``) and on flowgraph (``TF_MODULE=flowgraph``).

Written the way BERT's ``modeling.py`` / ``optimization.py`` / ``run_classifier.py`` are:
a 2-layer transformer (hidden 32), gelu, ``tf.contrib.layers.layer_norm``, a custom
``AdamWeightDecayOptimizer`` subclassing ``tf.train.Optimizer`` and overriding
``apply_gradients``, ``tf.train.init_from_checkpoint`` from a saved "pre-trained"
checkpoint, TFRecords written with ``tf.python_io.TFRecordWriter`` and read with
``tf.data.TFRecordDataset`` + ``tf.data.experimental.map_and_batch`` +
``tf.parse_single_example``, trained / evaluated / predicted / exported with
``TPUEstimator(use_tpu=False)``. Prints one ``KEY value`` line per result; the test
compares them with TensorFlow's.

Usage: ``python tpu_bert_program.py WORKDIR``.
"""

import importlib
import os

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ:
    tf.disable_v2_behavior()

import collections  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

VOCAB, HIDDEN, LAYERS, HEADS, INTER, SEQ, LABELS = 30, 32, 2, 4, 64, 8, 2


# ----------------------------------------------------------------- modeling.py, shrunk
def gelu(x):
    cdf = 0.5 * (1.0 + tf.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * tf.pow(x, 3))))
    return x * cdf


def create_initializer(initializer_range=0.02):
    return tf.truncated_normal_initializer(stddev=initializer_range)


def layer_norm(input_tensor, name=None):
    if hasattr(tf, "contrib"):  # TF 1.x (and flowgraph)
        return tf.contrib.layers.layer_norm(
            inputs=input_tensor, begin_norm_axis=-1, begin_params_axis=-1, scope=name)
    # TensorFlow 2.15 has no tf.contrib: the same variables and arithmetic by hand.
    with tf.variable_scope(name, "LayerNorm"):
        shape = input_tensor.shape[-1:]
        beta = tf.get_variable("beta", shape, initializer=tf.zeros_initializer())
        gamma = tf.get_variable("gamma", shape, initializer=tf.ones_initializer())
        mean, variance = tf.nn.moments(input_tensor, [-1], keep_dims=True)
        return tf.nn.batch_normalization(input_tensor, mean, variance, beta, gamma, 1e-12)


def dropout(input_tensor, dropout_prob):
    if dropout_prob is None or dropout_prob == 0.0:
        return input_tensor
    return tf.nn.dropout(input_tensor, 1.0 - dropout_prob)


def layer_norm_and_dropout(input_tensor, dropout_prob, name=None):
    return dropout(layer_norm(input_tensor, name), dropout_prob)


def reshape_to_matrix(t):
    return tf.reshape(t, [-1, t.shape[-1].value])


def transformer_model(x, attention_mask, hidden_dropout_prob):
    batch, seq = x.shape[0].value, x.shape[1].value
    head = HIDDEN // HEADS
    prev = reshape_to_matrix(x)
    for layer_idx in range(LAYERS):
        with tf.variable_scope(f"layer_{layer_idx}"):
            layer_input = prev
            with tf.variable_scope("attention"):
                with tf.variable_scope("self"):
                    def proj(name, t=layer_input):
                        y = tf.layers.dense(t, HIDDEN, name=name,
                                            kernel_initializer=create_initializer())
                        y = tf.reshape(y, [batch, seq, HEADS, head])
                        return tf.transpose(y, [0, 2, 1, 3])
                    q, k, v = proj("query"), proj("key"), proj("value")
                    scores = tf.matmul(q, k, transpose_b=True) * (1.0 / math.sqrt(head))
                    adder = (1.0 - tf.cast(tf.expand_dims(attention_mask, 1), tf.float32))
                    scores += adder * -10000.0
                    probs = tf.nn.softmax(scores)
                    ctx = tf.transpose(tf.matmul(probs, v), [0, 2, 1, 3])
                    attention_output = tf.reshape(ctx, [batch * seq, HIDDEN])
                with tf.variable_scope("output"):
                    attention_output = tf.layers.dense(
                        attention_output, HIDDEN, kernel_initializer=create_initializer())
                    attention_output = dropout(attention_output, hidden_dropout_prob)
                    attention_output = layer_norm(attention_output + layer_input)
            with tf.variable_scope("intermediate"):
                inter = tf.layers.dense(attention_output, INTER, activation=gelu,
                                        kernel_initializer=create_initializer())
            with tf.variable_scope("output"):
                out = tf.layers.dense(inter, HIDDEN, kernel_initializer=create_initializer())
                out = dropout(out, hidden_dropout_prob)
                prev = layer_norm(out + attention_output)
    return tf.reshape(prev, [batch, seq, HIDDEN])


class BertModel:
    def __init__(self, is_training, input_ids, input_mask, token_type_ids, scope=None):
        drop = 0.1 if is_training else 0.0
        batch, seq = input_ids.shape[0].value, input_ids.shape[1].value
        with tf.variable_scope(scope, default_name="bert"):
            with tf.variable_scope("embeddings"):
                table = tf.get_variable("word_embeddings", [VOCAB, HIDDEN],
                                        initializer=create_initializer())
                out = tf.gather(table, tf.reshape(input_ids, [-1]))
                out = tf.reshape(out, [batch, seq, HIDDEN])
                tt_table = tf.get_variable("token_type_embeddings", [2, HIDDEN],
                                           initializer=create_initializer())
                one_hot = tf.one_hot(tf.reshape(token_type_ids, [-1]), depth=2)
                out += tf.reshape(tf.matmul(one_hot, tt_table), [batch, seq, HIDDEN])
                pos = tf.get_variable("position_embeddings", [16, HIDDEN],
                                      initializer=create_initializer())
                out += tf.reshape(tf.slice(pos, [0, 0], [seq, -1]), [1, seq, HIDDEN])
                self.embedding_output = layer_norm_and_dropout(out, drop)
            with tf.variable_scope("encoder"):
                mask = tf.cast(tf.reshape(input_mask, [batch, 1, seq]), tf.float32)
                mask = tf.ones([batch, seq, 1], tf.float32) * mask
                self.sequence_output = transformer_model(self.embedding_output, mask, drop)
            with tf.variable_scope("pooler"):
                first = tf.squeeze(self.sequence_output[:, 0:1, :], axis=1)
                self.pooled_output = tf.layers.dense(
                    first, HIDDEN, activation=tf.tanh, kernel_initializer=create_initializer())


def get_assignment_map_from_checkpoint(tvars, init_checkpoint):
    name_to_variable = collections.OrderedDict()
    for var in tvars:
        m = re.match("^(.*):\\d+$", var.name)
        name_to_variable[m.group(1) if m else var.name] = var
    assignment_map, initialized = collections.OrderedDict(), {}
    for name, _ in tf.train.list_variables(init_checkpoint):
        if name in name_to_variable:
            assignment_map[name] = name
            initialized[name] = 1
            initialized[name + ":0"] = 1
    return assignment_map, initialized


# ------------------------------------------------------------- optimization.py, shrunk
class AdamWeightDecayOptimizer(tf.train.Optimizer):
    def __init__(self, learning_rate, weight_decay_rate=0.0, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-6, exclude_from_weight_decay=None,
                 name="AdamWeightDecayOptimizer"):
        super().__init__(False, name)
        self.learning_rate = learning_rate
        self.weight_decay_rate = weight_decay_rate
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.exclude_from_weight_decay = exclude_from_weight_decay

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        assignments = []
        for grad, param in grads_and_vars:
            if grad is None or param is None:
                continue
            param_name = self._get_variable_name(param.name)
            m = tf.get_variable(name=param_name + "/adam_m", shape=param.shape.as_list(),
                                dtype=tf.float32, trainable=False,
                                initializer=tf.zeros_initializer())
            v = tf.get_variable(name=param_name + "/adam_v", shape=param.shape.as_list(),
                                dtype=tf.float32, trainable=False,
                                initializer=tf.zeros_initializer())
            next_m = tf.multiply(self.beta_1, m) + tf.multiply(1.0 - self.beta_1, grad)
            next_v = (tf.multiply(self.beta_2, v)
                      + tf.multiply(1.0 - self.beta_2, tf.square(grad)))
            update = next_m / (tf.sqrt(next_v) + self.epsilon)
            if self._do_use_weight_decay(param_name):
                update += self.weight_decay_rate * param
            next_param = param - self.learning_rate * update
            assignments.extend([param.assign(next_param), m.assign(next_m), v.assign(next_v)])
        return tf.group(*assignments, name=name)

    def _do_use_weight_decay(self, param_name):
        if not self.weight_decay_rate:
            return False
        for r in self.exclude_from_weight_decay or []:
            if re.search(r, param_name) is not None:
                return False
        return True

    def _get_variable_name(self, param_name):
        m = re.match("^(.*):\\d+$", param_name)
        return m.group(1) if m is not None else param_name


def create_optimizer(loss, init_lr, num_train_steps, num_warmup_steps, use_tpu):
    global_step = tf.train.get_or_create_global_step()
    learning_rate = tf.constant(value=init_lr, shape=[], dtype=tf.float32)
    learning_rate = tf.train.polynomial_decay(learning_rate, global_step, num_train_steps,
                                              end_learning_rate=0.0, power=1.0, cycle=False)
    if num_warmup_steps:
        global_steps_int = tf.cast(global_step, tf.int32)
        warmup_steps_int = tf.constant(num_warmup_steps, dtype=tf.int32)
        warmup_percent_done = (tf.cast(global_steps_int, tf.float32)
                               / tf.cast(warmup_steps_int, tf.float32))
        warmup_learning_rate = init_lr * warmup_percent_done
        is_warmup = tf.cast(global_steps_int < warmup_steps_int, tf.float32)
        learning_rate = ((1.0 - is_warmup) * learning_rate
                         + is_warmup * warmup_learning_rate)
    optimizer = AdamWeightDecayOptimizer(
        learning_rate=learning_rate, weight_decay_rate=0.01,
        exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"])
    if use_tpu:
        optimizer = tf.tpu.CrossShardOptimizer(optimizer)
    tvars = tf.trainable_variables()
    grads = tf.gradients(loss, tvars)
    (grads, _) = tf.clip_by_global_norm(grads, clip_norm=1.0)
    train_op = optimizer.apply_gradients(zip(grads, tvars), global_step=global_step)
    new_global_step = global_step + 1
    return tf.group(train_op, [global_step.assign(new_global_step)])


# ------------------------------------------------------------ run_classifier.py, shrunk
NAME_TO_FEATURES = {
    "input_ids": tf.FixedLenFeature([SEQ], tf.int64),
    "input_mask": tf.FixedLenFeature([SEQ], tf.int64),
    "segment_ids": tf.FixedLenFeature([SEQ], tf.int64),
    "label_ids": tf.FixedLenFeature([], tf.int64),
}


def write_examples(path, n, rng):
    writer = tf.python_io.TFRecordWriter(path)
    for _ in range(n):
        length = int(rng.randint(3, SEQ + 1))
        ids = [int(i) for i in rng.randint(1, VOCAB, size=length)] + [0] * (SEQ - length)
        mask = [1] * length + [0] * (SEQ - length)
        seg = [0] * (length // 2) + [1] * (length - length // 2) + [0] * (SEQ - length)
        label = int(sum(ids) % 2)

        def ints(values):
            return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        features = collections.OrderedDict(input_ids=ints(ids), input_mask=ints(mask),
                                           segment_ids=ints(seg), label_ids=ints([label]))
        example = tf.train.Example(features=tf.train.Features(feature=features))
        writer.write(example.SerializeToString())
    writer.close()


def file_based_input_fn_builder(input_file, is_training, drop_remainder):
    def _decode_record(record, name_to_features):
        example = tf.parse_single_example(record, name_to_features)
        for name in list(example.keys()):
            t = example[name]
            if t.dtype == tf.int64:
                t = tf.to_int32(t)
            example[name] = t
        return example

    def input_fn(params):
        batch_size = params["batch_size"]
        d = tf.data.TFRecordDataset(input_file)
        if is_training:
            d = d.repeat()
        d = d.apply(tf.data.experimental.map_and_batch(
            lambda record: _decode_record(record, NAME_TO_FEATURES),
            batch_size=batch_size, drop_remainder=drop_remainder))
        return d
    return input_fn


def create_model(is_training, input_ids, input_mask, segment_ids, labels):
    model = BertModel(is_training, input_ids, input_mask, segment_ids)
    output_layer = model.pooled_output
    output_weights = tf.get_variable("output_weights", [LABELS, HIDDEN],
                                     initializer=tf.truncated_normal_initializer(stddev=0.02))
    output_bias = tf.get_variable("output_bias", [LABELS], initializer=tf.zeros_initializer())
    with tf.variable_scope("loss"):
        if is_training:
            output_layer = tf.nn.dropout(output_layer, keep_prob=0.9)
        logits = tf.nn.bias_add(tf.matmul(output_layer, output_weights, transpose_b=True),
                                output_bias)
        probabilities = tf.nn.softmax(logits, axis=-1)
        log_probs = tf.nn.log_softmax(logits, axis=-1)
        one_hot_labels = tf.one_hot(labels, depth=LABELS, dtype=tf.float32)
        per_example_loss = -tf.reduce_sum(one_hot_labels * log_probs, axis=-1)
        loss = tf.reduce_mean(per_example_loss)
        return loss, per_example_loss, logits, probabilities


class LossRecorder(tf.train.SessionRunHook):
    values = []

    def __init__(self, loss):
        self._loss = loss

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        LossRecorder.values.append(float(run_values.results))


def model_fn_builder(init_checkpoint, learning_rate, num_train_steps, num_warmup_steps,
                     use_tpu):
    def model_fn(features, labels, mode, params):
        print("PARAMS", mode, json.dumps({k: v for k, v in sorted(params.items())}))
        input_ids, input_mask = features["input_ids"], features["input_mask"]
        segment_ids = features["segment_ids"]
        label_ids = features.get("label_ids", tf.zeros_like(input_ids[:, 0]))
        is_training = mode == tf.estimator.ModeKeys.TRAIN
        total_loss, per_example_loss, logits, probabilities = create_model(
            is_training, input_ids, input_mask, segment_ids, label_ids)
        tvars = tf.trainable_variables()
        scaffold_fn = None
        assignment_map, initialized = get_assignment_map_from_checkpoint(tvars, init_checkpoint)
        if use_tpu:
            def tpu_scaffold():
                tf.train.init_from_checkpoint(init_checkpoint, assignment_map)
                return tf.train.Scaffold()
            scaffold_fn = tpu_scaffold
        else:
            tf.train.init_from_checkpoint(init_checkpoint, assignment_map)
        print("INIT_FROM_CKPT", mode, sum(1 for v in tvars if v.name in initialized),
              "of", len(tvars))
        if mode == tf.estimator.ModeKeys.TRAIN:
            train_op = create_optimizer(total_loss, learning_rate, num_train_steps,
                                        num_warmup_steps, use_tpu)
            return tf.estimator.tpu.TPUEstimatorSpec(
                mode=mode, loss=total_loss, train_op=train_op, scaffold_fn=scaffold_fn,
                training_hooks=[LossRecorder(total_loss)])
        if mode == tf.estimator.ModeKeys.EVAL:
            def metric_fn(per_example_loss, label_ids, logits):
                predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
                accuracy = tf.metrics.accuracy(labels=label_ids, predictions=predictions)
                loss = tf.metrics.mean(values=per_example_loss)
                return {"eval_accuracy": accuracy, "eval_loss": loss}
            return tf.estimator.tpu.TPUEstimatorSpec(
                mode=mode, loss=total_loss, scaffold_fn=scaffold_fn,
                eval_metrics=(metric_fn, [per_example_loss, label_ids, logits]))
        return tf.estimator.tpu.TPUEstimatorSpec(
            mode=mode, predictions={"probabilities": probabilities}, scaffold_fn=scaffold_fn,
            export_outputs={"serving_default": tf.estimator.export.PredictOutput(
                {"probabilities": probabilities})})
    return model_fn


def save_pretrained_checkpoint(path):
    """What a pre-training run would leave: the `bert/` variables only."""
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        ids = tf.zeros([1, SEQ], tf.int32)
        BertModel(False, ids, tf.ones_like(ids), tf.zeros_like(ids))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return tf.train.Saver().save(sess, path)


def serving_input_fn():
    feats = {name: tf.placeholder(tf.int32, [2, SEQ], name=name)
             for name in ("input_ids", "input_mask", "segment_ids")}
    return tf.estimator.export.ServingInputReceiver(feats, feats)


def main(workdir):
    rng = np.random.RandomState(0)
    train_file = os.path.join(workdir, "train.tf_record")
    eval_file = os.path.join(workdir, "eval.tf_record")
    write_examples(train_file, 24, rng)
    write_examples(eval_file, 8, rng)
    init_checkpoint = save_pretrained_checkpoint(os.path.join(workdir, "pretrained",
                                                              "bert_model.ckpt"))
    use_tpu = False
    run_config = tf.estimator.tpu.RunConfig(
        cluster=None, master=None, model_dir=os.path.join(workdir, "output"),
        save_checkpoints_steps=4, tf_random_seed=1234,
        tpu_config=tf.estimator.tpu.TPUConfig(
            iterations_per_loop=2, num_shards=8,
            per_host_input_for_training=tf.estimator.tpu.InputPipelineConfig.PER_HOST_V2))
    num_train_steps, num_warmup_steps = 6, 2
    estimator = tf.estimator.tpu.TPUEstimator(
        use_tpu=use_tpu, config=run_config,
        model_fn=model_fn_builder(init_checkpoint, 5e-3, num_train_steps, num_warmup_steps,
                                  use_tpu),
        train_batch_size=4, eval_batch_size=4, predict_batch_size=2)
    estimator.train(input_fn=file_based_input_fn_builder(train_file, True, True),
                    max_steps=num_train_steps)
    print("TRAIN_LOSSES", json.dumps([round(v, 4) for v in LossRecorder.values]))
    names = estimator.get_variable_names()
    print("NUM_VARIABLES", len(names))
    print("VARIABLES", json.dumps([n for n in names if "layer_1" not in n]))
    print("GLOBAL_STEP", int(estimator.get_variable_value("global_step")))
    print("OUTPUT_BIAS", json.dumps(
        np.round(estimator.get_variable_value("output_bias"), 4).tolist()))
    result = estimator.evaluate(input_fn=file_based_input_fn_builder(eval_file, False, True),
                                steps=None)
    print("EVAL", json.dumps({k: round(float(v), 4) for k, v in sorted(result.items())}))
    preds = estimator.predict(input_fn=file_based_input_fn_builder(eval_file, False, True))
    probs = [p["probabilities"] for p in preds]
    print("PREDICT", len(probs), json.dumps(np.round(np.array(probs[:3]), 4).tolist()))
    export_dir = estimator.export_saved_model(os.path.join(workdir, "export"),
                                              serving_input_fn)
    export_dir = export_dir.decode() if isinstance(export_dir, bytes) else export_dir
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        sig = meta.signature_def["serving_default"]
        print("SIGNATURE", sorted(sig.inputs), sorted(sig.outputs))
        rng = np.random.RandomState(3)
        feed = {sig.inputs["input_ids"].name: rng.randint(1, VOCAB, size=(2, SEQ)),
                sig.inputs["input_mask"].name: np.ones((2, SEQ), np.int32),
                sig.inputs["segment_ids"].name: np.zeros((2, SEQ), np.int32)}
        out = sess.run(sig.outputs["probabilities"].name, feed)
        print("SERVED", json.dumps(np.round(out, 4).tolist()))


if __name__ == "__main__":
    main(sys.argv[1])
