"""dlarray.datasets: the sample digits ship with the installed package and read as documented."""
import hashlib
import pathlib

import numpy as np
import pytest

import dlarray
from dlarray import datasets

from conftest import ROOT


def test_mnist10k_is_installed_with_the_package():
    path = datasets.mnist10k_path()
    assert path.parent == pathlib.Path(dlarray.__file__).resolve().parent / "data"
    assert ROOT / "data" not in path.parents  # the package's copy, not the repository's
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == hashlib.sha256((ROOT / "data" / "mnist10k.npz").read_bytes()).hexdigest()


def test_mnist10k_content():
    images, labels = datasets.mnist10k()
    assert images.dtype == np.uint8 and images.shape == (10000, 784)
    assert labels.dtype == np.uint8 and labels.shape == (10000,)
    # The counts data/README.md gives for the digits 0 to 9.
    assert np.bincount(labels).tolist() == [1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944,
                                            978]
    assert images.max() == 255 and images.min() == 0


def test_missing_data_names_the_path(monkeypatch, tmp_path):
    monkeypatch.setattr(datasets, "data_dir", lambda: tmp_path)
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "mnist10k.npz")):
        datasets.mnist10k()
