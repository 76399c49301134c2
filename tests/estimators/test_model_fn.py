"""EstimatorSpec validation per mode, and ModeKeys."""

import pytest

import flowgraph as tf
from flowgraph.estimators import EstimatorSpec, ModeKeys


def test_mode_keys_values():
    assert (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT) == ("train", "eval", "infer")


def my_model_fn(mode):
    return EstimatorSpec(mode, loss=tf.constant(1.0))


def test_train_requires_train_op_and_names_the_model_fn():
    with pytest.raises(ValueError) as e:
        my_model_fn(ModeKeys.TRAIN)
    assert str(e.value) == ("mode=train requires 'train_op'; model_fn 'my_model_fn' "
                            "returned None for it.")


def test_missing_loss_in_train_and_eval():
    op = tf.no_op()
    with pytest.raises(ValueError, match="mode=train requires 'loss'"):
        EstimatorSpec(ModeKeys.TRAIN, train_op=op)
    with pytest.raises(ValueError, match="mode=eval requires 'loss'"):
        EstimatorSpec(ModeKeys.EVAL)


def test_predict_requires_predictions():
    with pytest.raises(ValueError, match="mode=infer requires 'predictions'"):
        EstimatorSpec(ModeKeys.PREDICT, loss=tf.constant(1.0))


def test_the_estimator_context_names_the_model_fn():
    from flowgraph.estimators.model_fn import calling_model_fn

    with calling_model_fn("net_fn"), pytest.raises(ValueError, match="model_fn 'net_fn'"):
        EstimatorSpec(ModeKeys.PREDICT)


def test_valid_specs_fill_defaults():
    x = tf.constant([[1.0, 2.0, 3.0]])
    loss = tf.reduce_sum(x)
    spec = EstimatorSpec(ModeKeys.TRAIN, loss=loss, train_op=tf.no_op())
    assert spec.predictions == {} and spec.eval_metric_ops == {}
    assert spec.training_hooks == () and isinstance(spec.scaffold, tf.train.Scaffold)
    spec = EstimatorSpec(ModeKeys.PREDICT, predictions=x)
    assert spec.predictions is x
    spec = EstimatorSpec(ModeKeys.EVAL, loss=loss, eval_metric_ops={"m": (loss, tf.no_op())})
    assert set(spec.eval_metric_ops) == {"m"}


def test_loss_shape_one_is_reshaped_and_non_scalar_rejected():
    spec = EstimatorSpec(ModeKeys.EVAL, loss=tf.constant([2.0]))
    assert spec.loss.shape.ndims == 0
    with pytest.raises(ValueError, match="loss must be a scalar"):
        EstimatorSpec(ModeKeys.EVAL, loss=tf.constant([1.0, 2.0]))


def test_type_errors():
    with pytest.raises(TypeError, match="loss must be a Tensor"):
        EstimatorSpec(ModeKeys.EVAL, loss=1.0)
    with pytest.raises(TypeError, match="train_op must be an Operation or a Tensor"):
        EstimatorSpec(ModeKeys.TRAIN, loss=tf.constant(1.0), train_op="step")
    with pytest.raises(TypeError, match=r"\(metric_value, update_op\) tuples"):
        EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops={"a": 1})
    with pytest.raises(TypeError, match="predictions\\['p'\\] must be a Tensor"):
        EstimatorSpec(ModeKeys.PREDICT, predictions={"p": [1, 2]})
    with pytest.raises(TypeError, match="SessionRunHook"):
        EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0), evaluation_hooks=[object()])


def test_tensors_from_another_graph_are_rejected():
    with tf.Graph().as_default():
        other = tf.constant(1.0)
    with pytest.raises(ValueError, match="default graph"):
        EstimatorSpec(ModeKeys.EVAL, loss=other)


def test_bad_mode_and_replace():
    with pytest.raises(ValueError, match="ModeKeys"):
        EstimatorSpec("training", loss=tf.constant(1.0))
    spec = EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0))
    with pytest.raises(ValueError, match="cannot be changed"):
        spec._replace(mode=ModeKeys.TRAIN)
    p = tf.constant([1.0])
    assert spec._replace(predictions={"p": p}).predictions == {"p": p}
