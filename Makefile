# make demo: set up everything, then run the main job.   make test: set up, then every test.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BUILD  := build/py
export DLARRAY_TEST_PLUGIN_DIR := $(CURDIR)/$(BUILD)/test_plugins

.PHONY: demo check test install deps venv cpp-test py-test bench format clean

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
	$(PY) -m pip install -q "scikit-build-core>=0.8" "pybind11>=2.11" numpy pytest tqdm matplotlib \
	  ml_dtypes mypy

# One CMake build (in $(BUILD)) gives the package, the plugins, the doctest suite and the
# test-only plugins; pip installs the package into the virtualenv from it.
install: venv
	$(PY) -m pip install -q --no-build-isolation --no-deps \
	  --config-settings=build-dir=$(BUILD) \
	  --config-settings=cmake.define.DLARRAY_BUILD_TESTS=ON .

cpp-test:
	ctest --test-dir $(BUILD) --output-on-failure -j2

py-test:
	cd tests/python && ../../$(PY) -m pytest -q -ra .

bench: install
	$(PY) bench/ops.py
	$(PY) bench/mlp_step.py --device cpu

format:
	clang-format -i $$(git ls-files '*.c' '*.cc' '*.h' '*.cu' '*.cuh')

clean:
	rm -rf build $(VENV)
