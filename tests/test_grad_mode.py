"""Grad modes (no_grad, enable_grad, set_grad_enabled, inference_mode) against torch 2.13."""
import threading
import warnings

import pytest
import torch

import torchlike as tl

LIBS = pytest.mark.parametrize("L", [torch, tl], ids=["torch", "torchlike"])


def both(fn):
    """fn(lib) for torch and torchlike; the two results must be equal."""
    expected, actual = fn(torch), fn(tl)
    assert actual == expected
    return actual


def leaf(L):
    return L.tensor([1., 2.], requires_grad=True)


def test_no_grad_and_enable_grad():
    def run(L):
        x = leaf(L)
        out = []
        with L.no_grad():
            y = x * 2
            out += [y.requires_grad, y.grad_fn is None, y.is_leaf, L.is_grad_enabled()]
            # factories asked for requires_grad still get it
            out += [L.ones(2, requires_grad=True).requires_grad, L.tensor([1.], requires_grad=True).requires_grad,
                    L.zeros(2).requires_grad_().requires_grad]
            with L.enable_grad():
                z = x * 2
                out += [z.requires_grad, z.grad_fn.name(), L.is_grad_enabled()]
            out.append(L.is_grad_enabled())
        out.append(L.is_grad_enabled())
        # a no_grad output is usable in grad mode afterwards
        w = (y * x).sum()
        w.backward()
        out.append(x.grad.tolist())
        return out
    both(run)


def test_set_grad_enabled_call_context_decorator():
    def run(L):
        x = leaf(L)
        out = []
        L.set_grad_enabled(False)
        out += [L.is_grad_enabled(), (x * 2).requires_grad]
        L.set_grad_enabled(True)
        out.append(L.is_grad_enabled())
        with L.set_grad_enabled(False):
            out.append(L.is_grad_enabled())
            with L.set_grad_enabled(True):
                out.append((x * 2).requires_grad)
        out.append(L.is_grad_enabled())

        @L.set_grad_enabled(False)
        def f(a):
            return (a * 2).requires_grad, L.is_grad_enabled()
        out += [L.is_grad_enabled(), f(x), L.is_grad_enabled()]
        with L.no_grad():
            @L.set_grad_enabled(True)
            def g(a):
                return (a * 2).requires_grad
            out += [L.is_grad_enabled(), g(x), L.is_grad_enabled()]
        out.append(str(L.set_grad_enabled(True)).replace(L.__name__, "torch"))
        return out
    both(run)


def test_decorators_with_and_without_parentheses():
    def run(L):
        x = leaf(L)
        out = []
        for deco in (L.no_grad(), L.no_grad, L.enable_grad(), L.enable_grad, L.inference_mode(), L.inference_mode,
                     L.inference_mode(False)):
            @deco
            def f(a):
                """doc"""
                y = a * 2
                return y.requires_grad, L.is_grad_enabled(), L.is_inference_mode_enabled(), y.is_inference()
            with L.no_grad():
                out.append(f(x))
            out.append(f(x))
            out.append((f.__name__, f.__doc__))
        return out
    both(run)


def test_decorating_a_class_warns_and_wraps():
    def run(L):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")

            @L.no_grad()
            class C:
                def __init__(self):
                    self.grad = L.is_grad_enabled()
        return [a.category.__name__ for a in w], C().grad
    both(run)


def test_generator_functions():
    def run(L):
        x = leaf(L)
        out = []

        @L.no_grad()
        def gen(a):
            for i in range(3):
                sent = yield (a * i).requires_grad, L.is_grad_enabled()
                out.append(("sent", sent, L.is_grad_enabled()))
            return "done"

        it = gen(x)
        out += [next(it), L.is_grad_enabled(), it.send(5), L.is_grad_enabled()]
        out.append(list(gen(x)))

        @L.enable_grad()
        def gen2():
            try:
                yield L.is_grad_enabled()
            except ValueError:
                yield ("caught", L.is_grad_enabled())
            finally:
                out.append(("finally", L.is_grad_enabled()))

        with L.no_grad():
            g = gen2()
            out += [next(g), g.throw(ValueError), L.is_grad_enabled()]
            g.close()
            out.append(L.is_grad_enabled())
        return out
    both(run)


def test_inference_mode():
    def run(L):
        x = leaf(L)
        out = []
        with L.inference_mode():
            i = x * 2
            out += [L.is_inference_mode_enabled(), L.is_grad_enabled(), i.requires_grad, i.is_inference(),
                    L.ones(2).is_inference()]
            with L.inference_mode(False):
                y = x * 2
                out += [L.is_inference_mode_enabled(), L.is_grad_enabled(), y.requires_grad, y.is_inference()]
            with L.no_grad():
                out.append(L.is_inference_mode_enabled())
            i.add_(1)  # in-place on an inference tensor inside the mode is fine
        out += [L.is_inference_mode_enabled(), L.is_grad_enabled(), x.is_inference()]
        with L.no_grad():
            with L.inference_mode():
                out.append(L.is_grad_enabled())
            out.append(L.is_grad_enabled())
        # an inference tensor used where nothing is saved for it still works in grad mode
        z = (x + i).sum()
        z.backward()
        out += [z.requires_grad, x.grad.tolist(), i.tolist()]
        return out
    both(run)


def test_inference_tensor_errors():
    def run(L):
        with L.inference_mode():
            i = L.ones(3) * 2
        x = L.tensor([1., 2., 3.], requires_grad=True)
        out = []
        for fn in (lambda: x * i, lambda: i.mul_(2), lambda: i.add_(1)):
            try:
                fn()
                out.append("ok")
            except RuntimeError as e:
                out.append(str(e)[:46])
        with L.no_grad():
            try:
                i.add_(1)
            except RuntimeError as e:
                out.append(str(e)[:46])
        return out
    assert both(run) == ["Inference tensors cannot be saved for backward"] + \
        ["Inplace update to inference tensor outside Inf"] * 3


def test_modes_are_thread_local():
    def run(L):
        seen = {}
        start = threading.Barrier(2)

        def worker(name, mode):
            start.wait()
            seen[name + "_start"] = (L.is_grad_enabled(), L.is_inference_mode_enabled())
            with mode:
                seen[name + "_inside"] = (L.is_grad_enabled(), L.is_inference_mode_enabled())
                start.wait()  # both threads are inside their modes now
                seen[name + "_op"] = (leaf(L) * 2).requires_grad
                start.wait()
            seen[name + "_after"] = L.is_grad_enabled()

        with L.no_grad():  # the main thread's mode does not reach new threads
            threads = [threading.Thread(target=worker, args=("a", L.no_grad())),
                       threading.Thread(target=worker, args=("b", L.inference_mode()))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            seen["main"] = L.is_grad_enabled()
        L.set_grad_enabled(True)
        t = threading.Thread(target=lambda: L.set_grad_enabled(False))
        t.start()
        t.join()
        seen["main_after_thread_set"] = L.is_grad_enabled()
        return sorted(seen.items())
    both(run)


def test_backward_inside_no_grad_and_grad_mode_restored_after_errors():
    def run(L):
        x = leaf(L)
        y = (x * x).sum()
        out = []
        with L.no_grad():
            y.backward(retain_graph=True)  # backward works under no_grad; mode is restored afterwards
            out += [x.grad.tolist(), L.is_grad_enabled()]
        try:
            with L.no_grad():
                raise KeyError("boom")
        except KeyError:
            pass
        out.append(L.is_grad_enabled())
        try:
            y.backward(L.ones(3))
        except RuntimeError:
            pass
        out.append(L.is_grad_enabled())
        return out
    both(run)


@LIBS
def test_set_multithreading_enabled_is_accepted(L):
    assert L.autograd.is_multithreading_enabled()
    with L.autograd.set_multithreading_enabled(False):
        assert not L.autograd.is_multithreading_enabled()
    assert L.autograd.is_multithreading_enabled()
