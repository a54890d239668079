"""Train a small CNN on scikit-learn's digits (8x8 images, 10 classes) with DataLoader, save a checkpoint with
``torch.save``, resume it in a fresh process, and load it in real PyTorch.

    python examples/cnn_digits.py                   # torchlike: 2 epochs, save, resume 1 epoch in a new process
    python examples/cnn_digits.py --lib torch       # the same script on real PyTorch

The script is ordinary PyTorch code: ``lib`` is ``torchlike`` or ``torch`` and nothing else changes. Each epoch
prints its wall time and, for torchlike, how many XLA programs it built (traced, then compiled or loaded from JAX's
persistent compilation cache; or loaded from torchlike's executable cache): the first epoch builds each op's
program once per shape (two batch shapes: 64 and the last, smaller batch); the second builds none.
"""
import argparse
import importlib
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

N_TRAIN = 1500  # the first 1,500 images train, the other 297 test (the same split in every library)


def build(torch):
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 2 * 2, 10))


def datasets(torch):
    from sklearn.datasets import load_digits
    digits = load_digits()
    x = torch.tensor((digits.images / 16.0).astype(np.float32)).unsqueeze(1)
    y = torch.tensor(digits.target, dtype=torch.int64)
    data = torch.utils.data.TensorDataset(x, y)
    return (torch.utils.data.Subset(data, range(N_TRAIN)),
            torch.utils.data.Subset(data, range(N_TRAIN, len(data))))


def _compiles():
    """A running count of the XLA programs built in this process (torchlike only): JAX reports each trace, and
    torchlike each program it loads from its executable cache."""
    import jax
    count = [0]
    built = ("/jax/core/compile/jaxpr_trace_duration", "/torchlike/executable_cache/load")
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, _secs, **_: count.__setitem__(0, count[0] + (event in built)))
    return count


def evaluate(torch, model, test):
    model.eval()
    loader = torch.utils.data.DataLoader(test, batch_size=len(test))
    with torch.no_grad():
        x, y = next(iter(loader))
        logits = model(x)
    model.train()
    return (logits.argmax(1) == y).float().mean().item(), logits.numpy()


def train(torch, epochs, checkpoint=None, resume=None, seed=0, log=print):
    """Train (or resume) and return (per-epoch seconds, per-epoch compiles, test accuracy, test logits)."""
    torch.manual_seed(seed)
    train_set, test_set = datasets(torch)
    model = build(torch)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    start = 0
    if resume is not None:
        state = torch.load(resume)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["epoch"]
        log(f"resumed from {resume} after epoch {start}: test accuracy {evaluate(torch, model, test_set)[0]:.3f}")
    loader = torch.utils.data.DataLoader(train_set, batch_size=64, shuffle=True,
                                         generator=torch.Generator().manual_seed(seed + start))
    compiles = _compiles() if torch.__name__ == "torchlike" else None
    seconds, compiled = [], []
    for epoch in range(start, start + epochs):
        t0, c0 = time.perf_counter(), compiles[0] if compiles else 0
        total = 0.0
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
        seconds.append(time.perf_counter() - t0)
        compiled.append(compiles[0] - c0 if compiles else None)
        note = f", {compiled[-1]} XLA programs built" if compiles else ""
        log(f"epoch {epoch + 1}: loss {total / N_TRAIN:.4f}, {seconds[-1]:.2f} s{note}")
    accuracy, logits = evaluate(torch, model, test_set)
    log(f"test accuracy {accuracy:.3f}")
    if checkpoint is not None:
        torch.save({"epoch": start + epochs, "model": model.state_dict(), "optimizer": optimizer.state_dict()},
                   checkpoint)
        log(f"saved {checkpoint}")
    return seconds, compiled, accuracy, logits


def _run(*args):
    """This script in a fresh Python process."""
    return subprocess.run([sys.executable, os.path.abspath(__file__), *args], check=True, capture_output=True,
                          text=True).stdout


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lib", default="torchlike", choices=["torchlike", "torch"])
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--checkpoint", help="where to save (default: a temporary file)")
    p.add_argument("--resume", help="a checkpoint to resume from (then only train; no second process)")
    p.add_argument("--evaluate", help="only load this checkpoint and print its test logits (as .npy to stdout path)")
    args = p.parse_args(argv)
    torch = importlib.import_module(args.lib)
    if args.evaluate:  # used from another process: load a checkpoint and write the test logits next to it
        model = build(torch)
        model.load_state_dict(torch.load(args.evaluate)["model"])
        accuracy, logits = evaluate(torch, model, datasets(torch)[1])
        np.save(args.evaluate + f".{args.lib}.npy", logits)
        print(f"{args.lib} loaded {args.evaluate}: test accuracy {accuracy:.3f}")
        return
    if args.resume:
        train(torch, args.epochs, checkpoint=args.checkpoint, resume=args.resume)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = args.checkpoint or os.path.join(tmp, "digits.pt")
        _, _, accuracy, logits = train(torch, args.epochs, checkpoint=path)
        print("--- a fresh process loads the checkpoint and trains one more epoch:")
        print(_run("--lib", args.lib, "--resume", path, "--epochs", "1"), end="")
        other = "torch" if args.lib == "torchlike" else "torchlike"
        if importlib.util.find_spec(other) is not None:
            print(f"--- {other} (a fresh process) loads the same checkpoint:")
            print(_run("--lib", other, "--evaluate", path), end="")
            theirs = np.load(path + f".{other}.npy")
            np.testing.assert_allclose(theirs, logits, rtol=1e-4, atol=1e-4)
            print(f"its test logits equal {args.lib}'s (to 1e-4)")


if __name__ == "__main__":
    main()
