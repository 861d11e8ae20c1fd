"""Sample data that ships with the package, so the tutorials and examples run from an installed
wheel, outside the source repository, with nothing to download.

``mnist10k``: 10,000 handwritten digits of the MNIST database (LeCun, Cortes, Burges), 28x28
uint8 pixels and their labels, shuffled with a fixed seed; the first 8,000 are for training and the
last 2,000 for testing. Provenance and licence: ``dlarray/data/README.md`` (the repository's
``data/README.md``, installed next to the file) and THIRD_PARTY_NOTICES.md.
"""

from __future__ import annotations

import pathlib

import numpy as np
import numpy.typing as npt

__all__ = ["data_dir", "mnist10k", "mnist10k_path"]


def data_dir() -> pathlib.Path:
    """The folder of the package's sample data (``dlarray/data``)."""
    return pathlib.Path(__file__).resolve().parent / "data"


def mnist10k_path() -> pathlib.Path:
    """The path of ``mnist10k.npz`` in the installed package.

    Returns
    -------
    pathlib.Path
        A NumPy ``.npz`` file with ``images`` (uint8, (10000, 784)) and ``labels`` (uint8,
        (10000,)).

    Raises
    ------
    FileNotFoundError
        When the package was installed without its data (a build that skipped the install step
        of ``python/CMakeLists.txt``); the message names the expected path.
    """
    path = data_dir() / "mnist10k.npz"
    if not path.is_file():
        raise FileNotFoundError("dlarray's sample digits are not installed: no %s (the wheel "
                                "carries them; the source tree has them in data/)" % path)
    return path


def mnist10k() -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """The 10,000 sample digits: ``(images, labels)``.

    Returns
    -------
    images : numpy.ndarray
        uint8, shape (10000, 784): one row-major 28x28 image per row, 0 is the background.
    labels : numpy.ndarray
        uint8, shape (10000,): the digits 0 to 9. The first 8,000 rows are for training, the last
        2,000 for testing.

    Examples
    --------
    >>> from dlarray import datasets
    >>> images, labels = datasets.mnist10k()
    >>> images.shape, images.dtype, labels.shape, int(labels.max())
    ((10000, 784), dtype('uint8'), (10000,), 9)
    """
    with np.load(mnist10k_path()) as data:
        return data["images"], data["labels"]
