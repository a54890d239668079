"""Demo: train a small classifier eagerly with torchlike, show its autograd graph and the falling loss.

    python -m torchlike.demo

Everything below is ordinary PyTorch code with ``import torchlike as torch``; every op's forward and
backward formula runs as a cached ``jax.jit`` function.
"""
import time

import numpy as np

import torchlike as torch
import torchlike.nn as nn


def make_data(n_per_class=100, seed=0):
    """Three interleaved spirals in 2-D: a small problem a linear model cannot solve."""
    rng = np.random.RandomState(seed)
    xs, ys = [], []
    for c in range(3):
        r = np.linspace(0.1, 1.0, n_per_class)
        theta = np.linspace(c * 4, (c + 1) * 4, n_per_class) + rng.randn(n_per_class) * 0.2
        xs.append(np.stack([r * np.sin(theta), r * np.cos(theta)], axis=1))
        ys.append(np.full(n_per_class, c))
    return np.concatenate(xs).astype(np.float32), np.concatenate(ys).astype(np.int64)


def print_graph(tensor, names):
    """Print the autograd graph below ``tensor``: one line per node, edges as indentation.

    A node reached a second time is printed as a reference (``-> see above``); leaves show the
    parameter name and shape (``names`` maps id(parameter) -> name).
    """
    seen = set()
    stack = [(tensor.grad_fn, 0, "", "")]
    while stack:
        node, nr, prefix, label = stack.pop()
        if node is None:
            print(f"{prefix}{label}None")
            continue
        text = node.name()
        if hasattr(node, "variable"):
            v = node.variable
            text += f"  ({names.get(id(v), 'leaf')}: {list(v.shape)})"
        if node in seen:
            print(f"{prefix}{label}{text}  -> see above")
            continue
        seen.add(node)
        print(f"{prefix}{label}{text}" + (f"  [output {nr}]" if nr else ""))
        children = node.next_functions
        child_prefix = prefix + ("   " if label.startswith("└") else "│  " if label else "")
        for i in reversed(range(len(children))):
            child, child_nr = children[i]
            stack.append((child, child_nr, child_prefix, "└─ " if i == len(children) - 1 else "├─ "))


def main(steps=400, lr=0.01, hidden=32):
    torch.manual_seed(0)
    x_np, y_np = make_data()
    x, y = torch.tensor(x_np), torch.tensor(y_np)

    model = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                          nn.Linear(hidden, 3))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)  # one jitted update for all parameters
    print(model)
    print()

    loss = loss_fn(model(x), y)
    print("Autograd graph of the loss (node names as torch records them):")
    print_graph(loss, {id(p): name for name, p in model.named_parameters()})
    print()

    print(f"Training {steps} steps of full-batch Adam (lr={lr}) on {len(x_np)} points:")
    start = time.perf_counter()
    for step in range(steps + 1):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        if step % 50 == 0:
            with torch.no_grad():
                acc = (model(x).argmax(dim=1) == y).float().mean().item()
            print(f"  step {step:4d}  loss {loss.item():.4f}  accuracy {acc:.2f}")
    print(f"done in {time.perf_counter() - start:.1f} s (the first steps include jit compilation)")
    return loss.item()


if __name__ == "__main__":
    main()
