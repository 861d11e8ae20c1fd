"""Type information: py.typed and the _core stubs make mypy --strict see real types in a user
script (accepting correct code, reporting wrong code), and the stubs match the module."""
import pathlib
import subprocess
import sys

from conftest import ROOT

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
    assert 'Argument 1 to "gpu" has incompatible type "str"; expected "int"' in out
    # autodiff is typed too: Variable, Executor and gradients check their arguments.
    assert 'Argument 1 to "Variable" has incompatible type "int"; expected "str"' in out
    assert 'Argument "ctx" to "Executor" has incompatible type "str"; expected "DLContext | None"' \
        in out
    assert ('Argument 2 to "gradients" has incompatible type "Node"; expected "Iterable[Node]"'
            in out)


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


# Third-party packages some tutorial blocks use (they are skipped where missing): mypy may not find
# them here; every other import must resolve.
OPTIONAL_IMPORTS = ["torch", "cupy", "jax"]


def tutorial_scripts(folder):
    """One script per tutorial page: its python blocks at their lines in the page (as
    test_docs_code.py runs them), so mypy's line numbers are the page's."""
    from test_docs_code import python_blocks, tutorials
    scripts = []
    for page in tutorials():
        lines = []
        for block in python_blocks(page):
            lines += [""] * (block.line - 1 - len(lines)) + block.code.splitlines()
        script = folder / ("tutorial_%s.py" % page.stem.replace("-", "_"))
        script.write_text("\n".join(lines) + "\n")
        scripts.append(script)
    return scripts


def test_tutorial_scripts_keep_line_numbers(tmp_path):
    from test_docs_code import python_blocks
    page = ROOT / "docs" / "tutorials" / "training-autodiff.md"
    script = next(s for s in tutorial_scripts(tmp_path)
                  if s.name == "tutorial_training_autodiff.py")
    page_lines, script_lines = page.read_text().splitlines(), script.read_text().splitlines()
    first = python_blocks(page)[0]
    assert script_lines[first.line - 1] == page_lines[first.line - 1] != ""


def test_examples_and_tutorials_pass_mypy_strict(tmp_path):
    """Every example script and the code of every tutorial, as a user's script under
    mypy --strict (the installed package's types: py.typed, _core.pyi and annotations)."""
    examples = sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "examples").glob("*/*.py"))
    assert examples
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\n\n[mypy-%s]\nignore_missing_imports = True\n"
                      % ",".join(m + ".*" for m in OPTIONAL_IMPORTS))
    tutorials = tutorial_scripts(tmp_path)
    assert len(tutorials) >= 7
    out, err, status = mypy_api.run(["--config-file", str(config), "--no-incremental",
                                     "--cache-dir", "/dev/null"]
                                    + [str(p) for p in examples + tutorials])
    assert status == 0, out + err

