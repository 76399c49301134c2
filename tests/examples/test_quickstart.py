"""The README's main job trains, evaluates and leaves checkpoints and event files."""

import glob
import os

from flowgraph.examples import quickstart


def test_quickstart_job_trains_and_writes_artifacts(tmp_path, capsys):
    model_dir = str(tmp_path / "digits")
    metrics = quickstart.main(["--model_dir", model_dir, "--steps", "400"])
    assert metrics["accuracy"] >= 0.9
    assert metrics["global_step"] == 400
    out = capsys.readouterr().out
    assert "accuracy = " in out and model_dir in out
    assert os.path.exists(os.path.join(model_dir, "checkpoint"))
    assert os.path.exists(os.path.join(model_dir, "model.ckpt-400.index"))  # TF's layout
    assert glob.glob(os.path.join(model_dir, "events.out.tfevents.*"))
    assert glob.glob(os.path.join(model_dir, "eval", "events.out.tfevents.*"))
