#!/usr/bin/env bash
# The dlarray and dlarray-cuda wheels, installed and used as a user would on a GPU machine that
# cannot reach a package index (the lead's GPU machine, docs/install.md):
#
#   bash scripts/cuda_wheel_check.sh [WHEEL_DIR]     # default .cudawheel; exit 0 when all pass
#
# WHEEL_DIR holds dlarray-*-cpXY-*.whl for this machine's Python (PY, default python3),
# dlarray_cuda-*.whl and scipy_openblas32-*.whl (dlarray's BLAS). It makes a fresh virtualenv in
# a temporary folder, installs them with --no-index --no-deps, and from outside the repository
# checks: the cuda device is listed, an elementwise op and a matrix product (cuBLAS) against
# NumPy, an NVRTC kernel (dlarray.rtc), then `python -m dlarray --check`.
#
# What the wheels would get from PyPI comes from the machine instead:
# - NumPy: from the site-packages of PY, added to the venv by a .pth file (after the venv's own).
#   `venv --system-site-packages` is not enough where PY is itself a virtualenv (the GPU image's
#   python3 is /opt/torch/.venv's): it exposes the base interpreter's site-packages, without NumPy.
# - NVIDIA's runtime wheels (cudart, cuBLAS, NVRTC, cuFFT, cuSOLVER: hundreds of MB, past what can
#   be carried): the system's CUDA libraries, through LD_LIBRARY_PATH: CUDA_LIBS if set, else the
#   toolkit's (the folder of `nvcc`'s ../lib64, $CUDA_HOME/lib64, /usr/local/cuda/lib64), else the
#   nvidia/cu13/lib of PY's site-packages. The plugin's own RUNPATH (site-packages/nvidia/cu13/lib
#   of the venv) finds nothing here, as pip installed no NVIDIA wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
WHEELS=$(realpath "${1:-.cudawheel}")
PY=${PY:-python3}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

first() {  # the first existing path of a glob's matches, else nothing
  local f
  for f in "$@"; do [[ -e $f ]] && echo "$f" && return; done
  return 0
}
tag=$("$PY" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
core=$(first "$WHEELS"/dlarray-*-"$tag"-*.whl)
cuda=$(first "$WHEELS"/dlarray_cuda-*.whl)
blas=$(first "$WHEELS"/scipy_openblas32-*.whl)
for need in core cuda blas; do
  if [[ -z ${!need} ]]; then
    echo "cuda_wheel_check: no $need wheel in $WHEELS for $("$PY" -V) ($tag):" >&2
    ls -l "$WHEELS" >&2 || true
    exit 2
  fi
done

numpy_site=$("$PY" -c 'import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))')
libs=${CUDA_LIBS:-}
if [[ -z $libs ]]; then
  nvcc_path=$(command -v nvcc || true)
  for dir in ${nvcc_path:+$(dirname "$nvcc_path")/../lib64} ${CUDA_HOME:+$CUDA_HOME/lib64} \
    /usr/local/cuda/lib64 "$numpy_site/nvidia/cu13/lib"; do
    if [[ -e $dir/libcublas.so.13 && -e $dir/libcudart.so.13 ]]; then
      libs=$(realpath "$dir")
      break
    fi
  done
fi
[[ -n $libs ]] || { echo "cuda_wheel_check: no CUDA 13 libraries found (set CUDA_LIBS)" >&2; exit 2; }
export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$PY" -m venv "$work/venv"
py=$work/venv/bin/python
"$py" -m pip install -q --no-index --no-deps --disable-pip-version-check "$core" "$cuda" "$blas"
# After the install: pip must not see (and skip) what PY's site-packages may hold already.
echo "$numpy_site" >"$("$py" -c 'import site; print(site.getsitepackages()[0])')/zz_numpy.pth"
echo "cuda_wheel_check: $(basename "$core") $(basename "$cuda") $(basename "$blas")"
echo "  Python $("$py" -c 'import sys; print(sys.version.split()[0])'), NumPy from $numpy_site"
echo "  CUDA libraries: $libs"

cat >"$work/smoke.py" <<'EOF'
import numpy as np
import dlarray
import dlarray.rtc

installed = dlarray.__file__
assert "/venv/" in installed, installed  # the wheel, not a source tree
cuda = [p for p in dlarray.plugins() if p["name"] == "cuda"]
assert [p for p in cuda if p["status"] == "loaded"] == cuda[:1], cuda  # one, loaded
cuda = cuda[0]
assert "dlarray_cuda" in cuda["path"], cuda  # the dlarray-cuda wheel's, through its entry point
print("  plugin:", cuda["path"])
gpus = [d for d in dlarray.devices() if d.device_type == 2]
assert gpus, dlarray.devices()
ctx = gpus[0]
rng = np.random.default_rng(0)
for n in (1, 1025, 1 << 20):
    x = rng.standard_normal(n).astype(np.float32)
    y = dlarray.empty(x.shape, ctx)
    dlarray.ops.relu(dlarray.array(x, ctx), y)
    np.testing.assert_array_equal(y.asnumpy(), np.maximum(x, 0))
a = rng.standard_normal((257, 129)).astype(np.float32)
b = rng.standard_normal((129, 65)).astype(np.float32)
c = dlarray.empty((257, 65), ctx)
dlarray.ops.matrix_multiply(dlarray.array(a, ctx), False, dlarray.array(b, ctx), False, c)
np.testing.assert_allclose(c.asnumpy(), a @ b, rtol=1e-3, atol=1e-3)
add = dlarray.rtc.RawKernel(r'''
extern "C" __global__ void add(const float* x, const float* y, float* z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];
}''', "add")
n = 1000
x, y = rng.standard_normal((2, n)).astype(np.float32)
z = dlarray.empty((n,), ctx)
add(((n + 255) // 256,), (256,), (dlarray.array(x, ctx), dlarray.array(y, ctx), z, n))
np.testing.assert_array_equal(z.asnumpy(), x + y)
print("  %r: relu, matmul (cuBLAS) and an NVRTC kernel match NumPy; NVRTC %s"
      % (ctx, dlarray.rtc.status()["nvrtc_version"]))
EOF
(cd "$work" && "$py" smoke.py)
(cd "$work" && "$py" -m dlarray --check) >"$work/check.log" 2>&1 || {
  tail -40 "$work/check.log"
  echo "cuda_wheel_check: python -m dlarray --check failed" >&2
  exit 1
}
tail -3 "$work/check.log"
echo "cuda_wheel_check: passed"
