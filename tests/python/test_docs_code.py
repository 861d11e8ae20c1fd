"""The code of the docs runs: every ``python`` block of every page of docs/, in order, in one
namespace per page, from a temporary folder where the repository's top-level folders are visible.

Each page runs twice: ``[page]`` without the blocks that need hardware or packages (passes on any
machine), ``[page:all]`` with every block this machine can run (skipped, naming what is missing,
when some were left out: after running the others). Conventions for authors:
docs/tutorials/index.md.
"""
import importlib.util
import os
import pathlib
import re

import pytest

import dlarray
from conftest import ROOT

DOCS = ROOT / "docs"


def gpu_count():
    return sum(1 for c in dlarray.devices() if c.device_type == 2)


def opencl_missing():
    if any(c.device_type == 4 for c in dlarray.devices()):
        return None
    plugin = next((p for p in dlarray.plugins() if p["name"] == "opencl"), None)
    return "no OpenCL device (%s)" % (
        "%s: %s" % (plugin["status"], plugin["reason"]) if plugin else "plugin not built")


def package_missing(name):
    return None if importlib.util.find_spec(name) is not None else name + " is not installed"


# need (the block's class, without "needs-") -> why this machine cannot run it, or None.
NEEDS = {
    "gpu": lambda: None if gpu_count() >= 1 else "no usable GPU",
    "2-gpus": lambda: None if gpu_count() >= 2 else f"{gpu_count()} usable GPU(s), needs 2",
    "nvrtc": lambda: dlarray.rtc.status()["compile"] or None,
    "opencl": opencl_missing,
    "torch": lambda: package_missing("torch"),
    "cupy": lambda: package_missing("cupy"),
    "jax": lambda: package_missing("jax"),
    "array-api-extra": lambda: (package_missing("array_api_extra")
                                or package_missing("array_api_compat")),
    # Scripts of the source repository's examples/ (not in the wheel), run from the working folder.
    "examples": lambda: None if pathlib.Path("examples/mnist.py").is_file() else
    "no examples/ folder of the source repository in %s" % pathlib.Path.cwd(),
}

FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,}|:{3,})\s*(?P<info>.*)$")
CODE_BLOCK = re.compile(r"^\{(code-block|code|sourcecode)\}\s+(?P<lang>\S+)")


class Block:
    def __init__(self, page, line, code, classes):
        self.page, self.line, self.code, self.classes = page, line, code, classes

    @property
    def needs(self):
        return [c[len("needs-"):] for c in self.classes if c.startswith("needs-")]

    def run(self, namespace):
        # Padding puts each line at its line number in the page, for tracebacks.
        source = "\n" * (self.line - 1) + self.code
        exec(compile(source, str(self.page), "exec"), namespace)


def python_blocks(page):
    """The python code blocks of a MyST page, with their first line number and classes."""
    lines = page.read_text().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group("fence"), m.group("info").strip()
        close = re.compile(r"^\s*" + re.escape(fence[0]) + "{%d,}\\s*$" % len(fence))
        end = i + 1
        while end < len(lines) and not close.match(lines[end]):
            end += 1
        body = lines[i + 1:end]
        lang, classes = None, []
        if fence[0] != ":" and info in ("python", "python3", "py"):
            lang = "python"
        elif CODE_BLOCK.match(info):
            lang = CODE_BLOCK.match(info).group("lang")
            while body and re.match(r"^\s*:[\w-]+:", body[0]):
                key, _, value = body[0].strip()[1:].partition(":")
                if key == "class":
                    classes += value.split()
                body = body[1:]
                if body and not body[0].strip():
                    body = body[1:]  # the blank line that ends the options
        if lang in ("python", "python3", "py") and "no-run" not in classes:
            first = i + 2 + (end - i - 1 - len(body))
            indent = len(m.group("indent"))
            blocks.append(Block(page, first, "\n".join(l[indent:] for l in body) + "\n", classes))
        if fence[0] == ":" and not CODE_BLOCK.match(info):
            i += 1  # a ::: directive holds Markdown: look inside it
        else:
            i = end + 1
    return blocks


def pages():
    return sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts and python_blocks(p))


def page_id(page):
    return str(page.relative_to(DOCS).with_suffix(""))


def cases():
    out = []
    for page in pages():
        out.append(pytest.param(page, False, id=page_id(page)))
        if any(b.needs for b in python_blocks(page)):
            out.append(pytest.param(page, True, id=page_id(page) + ":all"))
    return out


SHIPPED_DEVICES = {"cpu", "cuda", "opencl"}


@pytest.fixture
def docs_cwd(tmp_path, monkeypatch):
    """A temporary folder that sees the repository's top-level folders (data/, examples/, ...)."""
    for entry in ROOT.iterdir():
        if not entry.name.startswith(".") and entry.name != "build" and entry.is_dir():
            os.symlink(entry, tmp_path / entry.name)
    monkeypatch.chdir(tmp_path)
    # The pages are about the devices the package ships. Test plugins that other test files
    # loaded into this process (pytest-xdist runs files in any order) serve only their own ops.
    shipped = [d for d in dlarray.devices() if repr(d).split("(")[0] in SHIPPED_DEVICES]
    monkeypatch.setattr(dlarray, "devices", lambda: list(shipped))
    return tmp_path


def plan(page, with_needs):
    """(the blocks to run, {need: why this machine lacks it}) for one case of ``page``."""
    blocks = python_blocks(page)
    missing = {}
    if with_needs:
        missing = {n: NEEDS[n]() for b in blocks for n in b.needs}
        missing = {n: why for n, why in missing.items() if why}
    runnable = [b for b in blocks if (with_needs or not b.needs)
                and not any(n in missing for n in b.needs)]
    return runnable, missing


def run_blocks(blocks):
    namespace = {"__name__": "__docs__"}
    for block in blocks:
        block.run(namespace)


def left_out(missing):
    return "; ".join(f"needs-{n}: {why}" for n, why in sorted(missing.items()))


@pytest.mark.parametrize("page,with_needs", cases())
def test_page_code_runs(page, with_needs, docs_cwd):
    runnable, missing = plan(page, with_needs)
    if with_needs and not any(b.needs for b in runnable):
        pytest.skip(left_out(missing))  # nothing beyond what [page] runs
    run_blocks(runnable)
    if missing:
        # The blocks this machine can run ran (and passed); say what was left out.
        pytest.skip("ran the blocks this machine can run; left out: " + left_out(missing))


def tutorials():
    return [p for p in pages() if p.parent == DOCS / "tutorials"]


@pytest.mark.parametrize("page", tutorials(), ids=page_id)
def test_tutorial_runs_from_the_installed_package(page, tmp_path, monkeypatch):
    """What a user of the wheel has: the installed package, in an empty folder outside the
    repository (no data/, no examples/). Only blocks marked needs-examples may be left out for
    that; the others run wherever this machine can."""
    package = pathlib.Path(dlarray.__file__).resolve()
    assert ROOT / "python" not in package.parents, f"dlarray is imported from the source: {package}"
    monkeypatch.chdir(tmp_path)
    runnable, missing = plan(page, with_needs=True)
    if any("examples" in b.needs for b in python_blocks(page)):
        assert "examples" in missing, "the empty folder has the repository's examples/?"
    run_blocks(runnable)
    missing.pop("examples", None)
    if missing:
        pytest.skip("ran the blocks this machine can run; left out: " + left_out(missing))


def test_every_need_is_known():
    unknown = {(page_id(b.page), b.line, n) for p in pages() for b in python_blocks(p)
               for n in b.needs if n not in NEEDS}
    assert not unknown, f"blocks with needs the test does not know (add them to NEEDS): {unknown}"


def test_every_tutorial_runs_code():
    for page in (DOCS / "tutorials").glob("*.md"):
        if page.name != "index.md":
            assert python_blocks(page), f"{page} has no python block: nothing of it is tested"


def test_block_parser(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("\n".join([
        "# t", "```python", "a = 1", "```",                              # 2: runs
        "````markdown", "```python", "not_code", "```", "````",          # shown, not run
        "```{code-block} python", ":class: needs-gpu", "", "b = 2", "```",  # needs a GPU
        "```{code-block} python", ":class: no-run", "c = 3", "```",      # never runs
        ":::{note}", "```python", "d = 4", "```", ":::",                 # inside a directive
        "```console", "$ e = 5", "```"]))
    blocks = python_blocks(page)
    assert [(b.line, b.code.strip(), b.needs) for b in blocks] == [
        (3, "a = 1", []), (13, "b = 2", ["gpu"]), (21, "d = 4", [])]
    namespace = {}
    blocks[0].run(namespace)
    assert namespace["a"] == 1
    page.write_text("```python\n\nraise ValueError('line 3')\n```\n")
    with pytest.raises(ValueError) as info:
        python_blocks(page)[0].run({})
    assert info.traceback[-1].lineno + 1 == 3 and str(info.traceback[-1].path) == str(page)
