"""Every script in examples/ explains itself (--help), runs a short job on the CPU with and without
its optional packages (tqdm, matplotlib), and refuses a bad output path before any work.

A new example adds one entry to EXAMPLES: how to run it briefly, and its output option.
"""
import pathlib
import subprocess
import sys

import pytest

from conftest import ROOT

OPTIONAL = ("tqdm", "matplotlib")


class Example:
    """How to exercise one example: ``short_run(tmp_path)`` gives the arguments of a run of a few
    seconds on the CPU, ``outputs(tmp_path)`` the files that run writes when matplotlib is
    present, ``output_option`` the option that names an output file."""

    def __init__(self, short_run, outputs, output_option):
        self.short_run, self.outputs, self.output_option = short_run, outputs, output_option


EXAMPLES = {
    "mnist.py": Example(
        short_run=lambda tmp: ["--device", "cpu", "--model", "logreg", "--epochs", "1",
                               "--plot", str(tmp / "curves.png")],
        outputs=lambda tmp: [tmp / "curves.png"],
        output_option="--plot"),
}


def scripts():
    return sorted(p.name for p in (ROOT / "examples").glob("*.py"))


def run_example(name, args, hide=(), cwd=None):
    """Runs examples/<name> with ``args`` in a new interpreter in which the modules of ``hide``
    cannot be imported (as if not installed)."""
    path = ROOT / "examples" / name
    code = ("import runpy, sys\n"
            "for m in %r: sys.modules[m] = None\n"
            "sys.argv = [%r] + %r\n"
            "runpy.run_path(%r, run_name='__main__')\n" % (tuple(hide), str(path), args, str(path)))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=cwd or ROOT, timeout=300)


def test_every_example_is_exercised():
    assert scripts() == sorted(EXAMPLES), "add each script of examples/ to EXAMPLES"


@pytest.mark.parametrize("hide", [(), OPTIONAL], ids=["all-packages", "no-optional-packages"])
@pytest.mark.parametrize("name", scripts())
def test_help(name, hide):
    result = run_example(name, ["--help"], hide)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: "), result.stdout
    docstring_first_line = (ROOT / "examples" / name).read_text().split('"""')[1].strip()
    assert docstring_first_line.splitlines()[0] in result.stdout, "--help shows the docstring"


@pytest.mark.parametrize("hide", [(), OPTIONAL], ids=["all-packages", "no-optional-packages"])
@pytest.mark.parametrize("name", scripts())
def test_short_run(name, hide, tmp_path):
    example = EXAMPLES[name]
    result = run_example(name, example.short_run(tmp_path), hide, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    for output in example.outputs(tmp_path):
        if "matplotlib" in hide:
            assert not output.exists()
            assert "matplotlib is not installed" in result.stderr
        else:
            assert output.stat().st_size > 0, output


@pytest.mark.parametrize("name", scripts())
def test_bad_output_path_fails_before_any_work(name, tmp_path):
    example = EXAMPLES[name]
    bad = tmp_path / "no_such_folder" / "out.png"
    args = example.short_run(tmp_path)
    args[args.index(example.output_option) + 1] = str(bad)
    result = run_example(name, args, cwd=tmp_path)
    assert result.returncode != 0
    assert str(bad.parent) in result.stderr and "does not exist" in result.stderr, result.stderr
    assert result.stdout == "", "the example started working before checking its output path"
    assert "Traceback" not in result.stderr


def test_mnist_checks_its_arguments(tmp_path):
    for args, message in [(["--epochs", "0"], "--epochs must be at least 1"),
                          (["--data", str(tmp_path / "none.npz")], "no such file"),
                          (["--plot", str(tmp_path)], "is a folder"),
                          (["--plot", str(tmp_path / "c.nosuchformat")], "unknown image format")]:
        result = run_example("mnist.py", ["--device", "cpu"] + args, cwd=tmp_path)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
        assert result.stdout == ""
