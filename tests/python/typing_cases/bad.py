"""A user script with type errors that mypy --strict must report (see test_typing.py)."""
import dlarray

a = dlarray.empty((2, 2))
n: str = a.size
dlarray.ops.relu(a)
dlarray.gpu("0")
