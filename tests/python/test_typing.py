"""Type information: py.typed and the _core stubs make mypy --strict see real types in a user
script (accepting correct code, reporting wrong code), and the stubs match the module."""
import pathlib
import subprocess
import sys

import pytest

import dlarray

CASES = pathlib.Path(__file__).with_name("typing_cases")
PACKAGE = pathlib.Path(dlarray.__file__).parent

mypy_api = pytest.importorskip("mypy.api", reason="mypy is not installed (make venv adds it)")


@pytest.fixture(scope="module")
def mypy_report():
    """One mypy --strict run over both user scripts: (output lines by file, status)."""
    out, err, status = mypy_api.run(["--strict", "--no-incremental", "--cache-dir", "/dev/null",
                                     str(CASES / "good.py"), str(CASES / "bad.py")])
    return out + err, status


def test_package_is_typed():
    assert (PACKAGE / "py.typed").is_file()
    assert (PACKAGE / "_core.pyi").is_file()


def test_mypy_strict_accepts_a_correct_user_script(mypy_report):
    out, _ = mypy_report
    assert "good.py" not in out, out


def test_mypy_strict_reports_wrong_types(mypy_report):
    out, status = mypy_report
    assert status == 1, out
    assert 'Incompatible types in assignment (expression has type "int", variable has type ' \
           '"str")' in out
    assert 'Missing positional argument "out_arr" in call to "relu"' in out
    assert 'Argument 1 to "gpu" has incompatible type "str"; expected "int"' in out


def test_stubs_match_the_module():
    """Every public name of _core is in the stub and the other way round."""
    text = (PACKAGE / "_core.pyi").read_text()
    from dlarray import _core
    names = {n for n in dir(_core) if not n.startswith("_")}
    missing = sorted(n for n in names if ("def %s(" % n) not in text and
                     ("class %s" % n) not in text and ("%s:" % n) not in text)
    assert missing == [], "names of _core without a stub: %s" % missing
    methods = {n for n in dir(_core.NDArray) if not n.startswith("_")}
    missing = sorted(n for n in methods if ("def %s(" % n) not in text)
    assert missing == [], "NDArray methods without a stub: %s" % missing


def test_stubtest_when_available():
    result = subprocess.run([sys.executable, "-m", "mypy.stubtest", "dlarray._core",
                             "--ignore-missing-stub", "--ignore-positional-only"],
                            capture_output=True, text=True, timeout=300)
    # pybind11 classes have their own metaclass; that is not a stub mistake.
    errors = [line for line in result.stdout.splitlines()
              if line.startswith("error:") and "metaclass differs" not in line]
    assert not errors, result.stdout[-4000:]
