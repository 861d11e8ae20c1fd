"""`python -m dlarray --check`: an op without a kernel on a device is reported, not raised (a
plugin may serve some devices only: the sigmoid plugin has no OpenCL kernel)."""
import numpy as np

import dlarray
from dlarray import __main__ as cli
from dlarray import _opbench


_REAL_CASES = _opbench.cases
SMALL = {"elementwise": (5, 3), "broadcast": ((3,), (4, 3)), "reduce": (4, 3, 2),
         "softmax": (4, 5), "matmul": [(3, 4, 5)]}


def _few_cases(sizes, rng):
    return [c for c in _REAL_CASES(SMALL, rng) if c.op.split()[0] in ("relu", "sigmoid")]


def test_an_op_without_a_kernel_is_reported_not_raised(monkeypatch, capsys):
    real = dlarray.ops.op_info

    def without_relu(name):
        info = dict(real(name))
        if name == "relu":
            info["devices"] = []  # as if no plugin had registered a relu kernel anywhere
        return info

    monkeypatch.setattr(dlarray.ops, "op_info", without_relu)
    monkeypatch.setattr(_opbench, "cases", _few_cases)
    monkeypatch.setattr(dlarray, "devices", lambda: [dlarray.cpu(0)])
    assert cli.check(quick=True) == 0
    out = capsys.readouterr().out
    assert "relu on cpu" in out and "no kernel on cpu devices" in out
    assert "sigmoid (plugin op)" in out  # the op with a kernel still ran and was compared


def test_a_wrong_result_still_fails_the_check(monkeypatch, capsys):
    monkeypatch.setattr(_opbench, "cases", _few_cases)
    monkeypatch.setattr(dlarray, "devices", lambda: [dlarray.cpu(0)])
    real_check = _opbench.check
    monkeypatch.setattr(_opbench, "check",
                        lambda case, ctx: (False, 1.0) if case.op == "relu" else
                        real_check(case, ctx))
    assert cli.check(quick=True) == 1
    assert "disagreed with NumPy" in capsys.readouterr().out
    ok, err = real_check(_few_cases(None, np.random.default_rng(0))[0], dlarray.cpu(0))
    assert ok and np.isfinite(err)
