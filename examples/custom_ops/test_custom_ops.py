#!/usr/bin/env python3
"""The seed's test_custom_ops.py (MindSpore's ops.Custom with func_type="aot"), with dlarray.

    python examples/custom_ops/test_custom_ops.py [--device cpu|gpu]

Runs the custom add of custom_add.cu on a GPU (custom_add.cc, its C++ twin, on the CPU), compiled
on first use: [1, 2, 3] + [3, 2, 1] = [4. 4. 4.]. Then, as the seed's Add cell does, gives it a
bprop returning (y,) and asks for the gradient for x: [3. 2. 1.].
"""
import argparse
import os
from typing import Any, Optional, Sequence

import numpy as np
import numpy.typing as npt

import dlarray
from dlarray import autodiff as ad
from dlarray.custom import Custom

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv: Optional[Sequence[str]] = None) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--device", choices=["cpu", "gpu"], default=None,
                        help="default: gpu when usable, else cpu")
    args = parser.parse_args(argv)
    gpu = args.device == "gpu" or (args.device is None and dlarray.gpu(0) in dlarray.devices())
    ctx = dlarray.gpu(0) if gpu else dlarray.cpu(0)
    source = os.path.join(HERE, "custom_add.cu" if gpu else "custom_add.cc")

    t1 = dlarray.array([1., 2., 3.], ctx)
    t2 = dlarray.array([3., 2., 1.], ctx)
    custom_add = Custom(source + ":CustomAdd", out_shape=[t1.shape[0]], out_dtype="float32",
                        func_type="aot")
    res = custom_add(t1, t2)
    print(res.asnumpy())

    # The seed's Add cell: its bprop returns (y,), and the gradient for x is asked for.
    def bprop(x: Any, y: Any, out: Any, dout: Any) -> tuple[Any]:
        return (y,)

    add = Custom(source + ":CustomAdd", out_shape=[t1.shape[0]], out_dtype="float32",
                 func_type="aot", bprop=bprop)
    x, y = ad.Variable("x"), ad.Variable("y")
    z = add(x, y)
    res_g, = ad.gradients(z, [x])
    res, grad = ad.Executor([z, res_g], ctx=ctx).run({x: t1, y: t2},
                                                      convert_to_numpy_ret_vals=True)
    print(res)
    print(grad)
    return np.asarray(res), np.asarray(grad)


if __name__ == "__main__":
    main()
