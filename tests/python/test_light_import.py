"""Heavy GPU libraries load at their first use, not at `import dlarray`: cuBLAS (with cuBLASLt,
about 145 MB resident) is opened by the CUDA plugin at the first matrix product on a GPU."""
import json

import numpy as np
import pytest

import dlarray
from proc_util import run

GPU = dlarray.gpu(0)
HAS_GPU = GPU in dlarray.devices()

MAPPED = """
    import json
    import dlarray
    mapped = open("/proc/self/maps").read()
    cuda = [p for p in dlarray.plugins() if p["name"] == "cuda"]
    print(json.dumps({"cublas": "libcublas" in mapped,
                      "cuda_plugin": cuda[0]["status"] if cuda else None}))
"""


def test_import_maps_no_cublas():
    r = run(MAPPED)
    assert r.returncode == 0, r
    state = json.loads(r.stdout.strip().splitlines()[-1])
    if state["cuda_plugin"] is None:
        pytest.skip("this build has no CUDA plugin")
    assert state["cuda_plugin"] in ("loaded", "no devices")  # the plugin itself was opened
    assert not state["cublas"], "import dlarray mapped cuBLAS before any matrix product"


@pytest.mark.skipif(not HAS_GPU, reason="no usable GPU on this machine")
def test_the_first_gpu_product_loads_cublas_and_computes():
    r = run("""
        import json
        import numpy as np
        import dlarray
        before = "libcublas" in open("/proc/self/maps").read()
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        x = dlarray.array(a, dlarray.gpu(0))
        y = dlarray.empty((3, 3), dlarray.gpu(0))
        dlarray.ops.matrix_multiply(x, False, x, True, y)  # y = x @ x.T
        print(json.dumps({"before": before, "after": "libcublas" in open("/proc/self/maps").read(),
                          "y": y.asnumpy().tolist()}))
    """)
    assert r.returncode == 0, r
    state = json.loads(r.stdout.strip().splitlines()[-1])
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert not state["before"] and state["after"]
    np.testing.assert_allclose(state["y"], a @ a.T, rtol=1e-6)


@pytest.mark.skipif(not HAS_GPU, reason="no usable GPU on this machine")
def test_a_missing_cublas_is_an_error_naming_the_fix():
    r = run("""
        import numpy as np
        import dlarray
        x = dlarray.array(np.ones((2, 2), np.float32), dlarray.gpu(0))
        y = dlarray.empty((2, 2), dlarray.gpu(0))
        dlarray.ops.relu(x, y)  # ops without cuBLAS still run
        try:
            dlarray.ops.matrix_multiply(x, False, x, False, y)
        except RuntimeError as e:
            print("ERROR", e)
    """, env={"DLARRAY_CUBLAS": "/nonexistent/libcublas.so.13"})
    assert r.returncode == 0, r
    assert r.stdout.startswith("ERROR "), r
    assert "cuBLAS (matrix products on the GPU) is not available" in r.stdout, r
    assert "DLARRAY_CUBLAS" in r.stdout, r
