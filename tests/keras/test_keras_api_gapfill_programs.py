"""TF1-era tf.keras programs using the session-16 API gap-fill (tests/keras/programs_kapi/,
sweep ``ka``): each prints under flowgraph exactly what it printed under TF 2.15's
tf.compat.v1 (graph mode), recorded with the tf-oracle."""

# ruff: noqa: E501  (TF's printed lines, verbatim)
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

PROGRAM_OUTPUTS = {
    'backend_rnn': [
        'last (3, 4) [-0.9929999709129333, -0.8569999933242798, 0.9490000009536743, -0.9810000061988831] -1.8147',
        'outs (3, 5, 4) [0.03099999949336052, -0.29600000381469727, 0.2549999952316284, -0.5559999942779541] -1.2366',
        'blast (3, 4) [-0.8569999933242798, -0.8830000162124634, 0.8169999718666077, -0.8640000224113464] -1.219',
        'bouts (3, 5, 4) [0.0, 0.0, 0.0, 0.0] -2.0736',
        'total () [-1.2369999885559082] -1.2366',
        'norms (3,) [3.6449999809265137, 2.3989999294281006, 1.9819999933242798] 8.0258',
        'rep (3, 2, 4) [-0.9929999709129333, -0.8569999933242798, 0.9490000009536743, -0.9810000061988831] -3.6294',
        'state (3, 4) [-0.9929999709129333, -0.8569999933242798, 0.9490000009536743, -0.9810000061988831] -1.8147',
        'grads [-6.5369, 1.4939]',
    ],
    'ctc_ocr': [
        'ctc loss [6.2631, 4.4739, 4.6617, 4.7275, 4.3989]',
        'greedy [[1, -1, -1, -1, -1, -1, -1, -1], [1, -1, -1, -1, -1, -1, -1, -1], [0, -1, -1, -1, -1, -1, -1, -1], [1, 0, -1, -1, -1, -1, -1, -1], [1, 1, -1, -1, -1, -1, -1, -1], [0, -1, -1, -1, -1, -1, -1, -1]] [3.578000068664551, 3.4639999866485596, 3.5510001182556152, 3.7160000801086426, 4.38100004196167, 3.76200008392334]',
        'beam [[[0, 1, -1, -1, -1, -1, -1, -1], [0, 1, -1, -1, -1, -1, -1, -1], [1, 0, -1, -1, -1, -1, -1, -1], [1, 0, -1, -1, -1, -1, -1, -1], [0, 1, -1, -1, -1, -1, -1, -1], [0, 1, -1, -1, -1, -1, -1, -1]], [[1, -1, -1, -1, -1, -1, -1, -1], [0, -1, -1, -1, -1, -1, -1, -1], [0, -1, -1, -1, -1, -1, -1, -1], [0, -1, -1, -1, -1, -1, -1, -1], [0, 1, -1, -1, -1, -1, -1, -1], [0, -1, -1, -1, -1, -1, -1, -1]]] [[-2.4820001125335693, -2.7990000247955322], [-2.6059999465942383, -2.809999942779541], [-2.0199999809265137, -2.696000099182129], [-2.681999921798706, -3.049999952316284], [-2.256999969482422, -2.700000047683716], [-2.5920000076293945, -3.053999900817871]]',
        'sparse [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]]',
    ],
    'custom_backend_layer': [
        'hist [103.78, 97.992, 92.61]',
        "classes ['InputLayer', 'blocks>ConvPool', 'Flatten', 'Dense']",
        'same True ConvPool',
        "ser Adamax {'class_name': 'TruncatedNormal', 'config': {'mean': 0.0, 'stddev': 0.1, 'seed': None, 'dtype': 'float32'}}",
        'registered blocks>ConvPool',
    ],
    'focal_imbalanced': [
        'positives 26',
        'binary_io_u [0.1469, 0.1615, 0.1858, 0.21, 0.236, 0.2692]',
        'loss [0.0465, 0.0414, 0.0369, 0.0326, 0.0287, 0.0252]',
        'precision_at_recall [0.475, 0.5556, 0.6774, 0.7241, 0.8261, 0.8333]',
        'sensitivity_at_specificity [0.5714, 0.6667, 1.0, 1.0, 1.0, 1.0]',
        'val_binary_io_u [0.1064, 0.1064, 0.1163, 0.125, 0.1351, 0.1562]',
        'val_loss [0.0464, 0.0424, 0.0386, 0.0351, 0.0319, 0.0292]',
        'val_precision_at_recall [0.6667, 0.8, 1.0, 1.0, 1.0, 1.0]',
        'val_sensitivity_at_specificity [0.8, 0.8, 0.8, 0.8, 0.8, 0.8]',
        'eval [0.0292, 0.1562, 1.0, 0.8]',
        "opt ['training/Nadam/iter:0', 'training/Nadam/momentum_cache:0', 'training/Nadam/dense/kernel/m:0'] 0.004",
    ],
    'segmentation_iou': [
        'loss [0.1209, 0.1107, 0.1036, 0.095]',
        'one_hot_io_u [0.3188, 0.3881, 0.4201, 0.5305]',
        'one_hot_mean_io_u [0.2928, 0.3269, 0.3652, 0.4574]',
        'meaniou 0.5014 (2, 8, 8)',
        "['training/Adamax/iter:0', 'training/Adamax/conv2d/kernel/m:0']",
    ],
    'text_sequence': [
        'batch0 [[16, 1, 4, 4, 8, 10], [19, 5, 7, 13, 2, 0]]',
        'acc [0.375, 0.4375, 0.4688]',
        'loss [0.7533, 0.7254, 0.7144]',
        'val_acc [0.625, 0.625, 0.625]',
        'val_loss [0.6772, 0.6763, 0.6761]',
        'pred [0.40389999747276306, 0.4226999878883362, 0.3878999948501587, 0.4429999887943268, 0.4602999985218048, 0.4627000093460083, 0.47360000014305115, 0.3666999936103821]',
        'eval 0.6761',
        'ordinal [[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]',
    ],
    'wide_deep': [
        'loss [0.4852, 0.4186, 0.3857, 0.3644]',
        'acc [0.7656, 0.8125, 0.8125, 0.8125]',
        "weights ['wide_deep_model/linear_model/kernel:0', 'wide_deep_model/linear_model/bias:0', 'dense/kernel:0', 'dense/bias:0', 'dense_1/kernel:0', 'dense_1/bias:0']",
        'pred [0.29989999532699585, 0.3052999973297119, 0.3492000102996826, 0.09600000083446503]',
        'linear kernel [-0.29339998960494995, 0.053300000727176666, -0.17170000076293945, 0.20509999990463257, -0.17509999871253967]',
    ],
}


@pytest.mark.parametrize("name", sorted(PROGRAM_OUTPUTS))
def test_programs_print_what_tensorflow_prints(name):
    program = pathlib.Path(__file__).parent / "programs_kapi" / f"{name}.py"
    env = {**os.environ, "TF_MODULE": "flowgraph"}
    out = subprocess.run([sys.executable, str(program)], capture_output=True, text=True,
                         env=env, cwd=pathlib.Path(__file__).parents[2], timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines() == PROGRAM_OUTPUTS[name]
