"""torch's submodules that training scripts import, against torch 2.13: nn.modules.utils, nn.modules.batchnorm's bases."""
import collections
import os
import warnings

import numpy as np
import pytest
import torch
from torch.nn.modules import batchnorm as torch_batchnorm
from torch.nn.modules import utils as torch_nn_utils

import torchlike as tl
from oracle import assert_same, error_of
from torchlike.nn.modules import batchnorm as tl_batchnorm
from torchlike.nn.modules import utils as tl_nn_utils


def _warnings(fn):
    """fn()'s result and its warnings as (category, message, file)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [(w.category.__name__, str(w.message), os.path.basename(w.filename)) for w in caught]


# ----- torch.nn.modules.utils -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["_single", "_pair", "_triple", "_quadruple"])
def test_ntuple_parsers(name):
    ours, theirs = getattr(tl_nn_utils, name), getattr(torch_nn_utils, name)
    assert ours.__name__ == theirs.__name__ == name
    for value in (3, 2.5, None, (1, 2), [4, 5, 6], range(3), "ab", tl.Size([7, 8])):
        assert ours(value) == theirs(value)
    assert ours(x for x in (1, 2)) == (1, 2)  # any iterable becomes a tuple
    assert tl_nn_utils._ntuple(5)(1) == torch_nn_utils._ntuple(5)(1) == (1,) * 5
    assert tl_nn_utils._ntuple(3, "p").__name__ == "p"


def test_reverse_repeat_tuple_and_list_with_default():
    for t, n in (((1, 2, 3), 2), ((0,), 3), ((), 2), ((4, 5), 1)):
        assert tl_nn_utils._reverse_repeat_tuple(t, n) == torch_nn_utils._reverse_repeat_tuple(t, n)
    for out, defaults in ((5, [1, 2]), ([None, 3], [8, 9, 10]), ([2, None], [1, 6, 7])):
        assert tl_nn_utils._list_with_default(out, defaults) == torch_nn_utils._list_with_default(out, defaults)
    assert error_of(lambda: tl_nn_utils._list_with_default([1, 2], [3, 4])) == \
        error_of(lambda: torch_nn_utils._list_with_default([1, 2], [3, 4]))


def test_consume_prefix_in_state_dict_if_present():
    def make():
        sd = collections.OrderedDict([("module.a", 1), ("module.b.c", 2), ("other", 3)])
        sd._metadata = collections.OrderedDict([("", {"v": 0}), ("module", {"v": 1}), ("module.b", {"v": 2}),
                                                 ("x", {"v": 3})])
        return sd
    ours, theirs = make(), make()
    tl_nn_utils.consume_prefix_in_state_dict_if_present(ours, "module.")
    torch_nn_utils.consume_prefix_in_state_dict_if_present(theirs, "module.")
    assert list(ours.items()) == list(theirs.items()) and list(ours._metadata.items()) == list(theirs._metadata.items())
    assert tl_nn_utils.__all__ == torch_nn_utils.__all__


def test_conv_parses_its_arguments_as_torch():
    for kw in (dict(kernel_size=range(2, 4), padding=(1, 2)), dict(kernel_size=3, padding=[2, 0], stride=2),
               dict(kernel_size=(1, 3), padding="same")):
        ours, theirs = tl.nn.Conv2d(2, 4, **kw), torch.nn.Conv2d(2, 4, **kw)
        for attr in ("kernel_size", "stride", "padding", "dilation", "output_padding",
                     "_reversed_padding_repeated_twice"):
            assert getattr(ours, attr) == getattr(theirs, attr), attr


# ----- torch.nn.modules.batchnorm._NormBase / _BatchNorm ----------------------------------------------------------
def _user_batch_norm(module):
    class MyBatchNorm(module._BatchNorm):  # as user code (e.g. frozen or masked batch norms) writes it
        def _check_input_dim(self, input):
            if input.dim() < 2:
                raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
    return MyBatchNorm


def test_user_code_subclasses_batchnorm_as_torchs():
    x = np.random.default_rng(1).standard_normal((4, 3, 5)).astype(np.float32)
    ours, theirs = _user_batch_norm(tl_batchnorm)(3, momentum=0.3), _user_batch_norm(torch_batchnorm)(3, momentum=0.3)
    assert repr(ours) == repr(theirs) and list(ours.state_dict()) == list(theirs.state_dict())
    for train in (True, True, False):
        ours.train(train)
        theirs.train(train)
        assert_same(ours(tl.tensor(x)), theirs(torch.tensor(x)), 1e-5, 1e-5)
    assert_same(ours.running_mean, theirs.running_mean)
    assert_same(ours.running_var, theirs.running_var)
    assert_same(ours.num_batches_tracked, theirs.num_batches_tracked)
    assert error_of(lambda: ours(tl.ones(3))) == error_of(lambda: theirs(torch.ones(3)))


def test_batchnorm_class_hierarchy_as_torchs():
    for name in ("BatchNorm1d", "BatchNorm2d", "InstanceNorm2d"):
        ours, theirs = getattr(tl.nn, name)(3), getattr(torch.nn, name)(3)
        for base in ("_NormBase", "_BatchNorm"):
            assert isinstance(ours, getattr(tl_batchnorm, base)) == isinstance(theirs, getattr(torch_batchnorm, base))
    ours = tl_batchnorm._NormBase(3, affine=False)
    theirs = torch_batchnorm._NormBase(3, affine=False)
    assert ours.extra_repr() == theirs.extra_repr()
    for norm in (ours, theirs):
        with pytest.raises(NotImplementedError):
            norm._check_input_dim(None)
