"""A user script with type errors that mypy --strict must report (see test_typing.py)."""
import dlarray

a = dlarray.empty((2, 2))
n: str = a.size
dlarray.gpu("0")

from dlarray import autodiff as ad

v = ad.Variable(3)
ad.Executor([v], ctx="cpu")
ad.gradients(v, v)
