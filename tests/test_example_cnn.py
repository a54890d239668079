"""examples/cnn_digits.py: a CNN trained with DataLoader on scikit-learn's digits; its second epoch compiles
nothing; its checkpoint resumes in a fresh process and loads in real torch with the same test logits."""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_cnn_digits_trains_saves_resumes_and_loads_in_torch(tmp_path):
    ckpt = tmp_path / "digits.pt"
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "cnn_digits.py"), "--checkpoint", str(ckpt)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    epochs = [(int(e), float(loss), int(c)) for e, loss, c in
              re.findall(r"epoch (\d+): loss ([\d.]+), [\d.]+ s, (\d+) XLA programs", out)]
    assert [e for e, _, _ in epochs] == [1, 2, 3]
    assert epochs[0][2] > 0 and epochs[1][2] == 0  # the second epoch (new batches, new indices) compiles nothing
    assert epochs[0][1] > epochs[1][1] > epochs[2][1]  # the loss falls, also after resuming in a new process
    accuracy = [float(a) for a in re.findall(r"test accuracy ([\d.]+)", out)]
    assert accuracy[0] > 0.6 and accuracy[1] == accuracy[0]  # the resumed model is the saved one
    assert "torch loaded" in out and "its test logits equal torchlike's" in out
    assert ckpt.exists()
