"""What the dlarray.rtc tests share: what this machine can do, a cache folder per test module,
and the kernel bodies of seed 003 (extracted from the seed at test time, never copied)."""
import pathlib
import re

import pytest

import dlarray
import dlarray.rtc as rtc

ROOT = pathlib.Path(__file__).resolve().parents[2]
SEEDS = ROOT.parent / "shared" / "seeds"

STATUS = rtc.status()
GPUS = [c for c in dlarray.devices() if c.device_type == 2]

needs_nvrtc = pytest.mark.skipif(bool(STATUS["compile"]),
                                 reason="NVRTC is not usable here: %s" % STATUS["compile"])
needs_gpu = pytest.mark.skipif(not rtc.is_available(),
                               reason="no GPU to launch on: %s" % (STATUS["launch"] or
                                                                   STATUS["compile"]))

ADD = r"""
extern "C" __global__ void add(const float* x, const float* y, float* z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];
}
"""


@pytest.fixture(scope="module", autouse=True)
def rtc_cache(tmp_path_factory):
    """A fresh DLARRAY_CACHE_DIR (and empty in-memory caches) for each test module."""
    folder = tmp_path_factory.mktemp("rtc-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DLARRAY_CACHE_DIR", str(folder))
        mp.delenv("DLARRAY_RTC_CACHE", raising=False)
        rtc.clear_memory_cache()
        yield folder
        rtc.clear_memory_cache()


def seed_kernels():
    """{name: (inputs, outputs, body)} of every ``mx.rtc(...)`` call in seed 003, the body as the
    seed writes it (the blog's line numbers removed). Skips where the seed is absent."""
    files = sorted(SEEDS.glob("003_*.txt"))
    if not files:
        pytest.skip("seed 003 is not in %s (the seeds live outside the repository)" % SEEDS)
    text = files[0].read_text(encoding="utf-8")
    out = {}
    for m in re.finditer(r"mx\.rtc\(\s*'(\w+)'\s*,\s*\[(.*?)\]\s*,\s*\[(.*?)\]\s*,\s*\"\"\"", text):
        end = text.index('"""', m.end())
        lines = text[m.end():end].split("\n")
        body = "\n".join(re.sub(r"^\s*\d+ ?", "", line, count=1) for line in lines)
        names = [re.findall(r"\(\s*'(\w+)'", group) for group in (m.group(2), m.group(3))]
        out[m.group(1)] = (names[0], names[1], body)
    if not {"softmax", "softmax_grad", "reorg", "reorg_grad"} <= set(out):
        pytest.fail("seed 003 changed: found kernels %s" % sorted(out))
    return out
