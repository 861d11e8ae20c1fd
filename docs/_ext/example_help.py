"""The ``example-help`` directive: the ``--help`` of every script in examples/, run at build time,
so the examples page says what the scripts say about themselves (a new script appears there
with no change to the docs)."""
import os
import pathlib
import subprocess
import sys

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

ROOT = pathlib.Path(__file__).resolve().parents[2]
logger = logging.getLogger(__name__)


def example_help(path):
    """The --help text of one example; raises RuntimeError with its stderr when it fails."""
    env = dict(os.environ, COLUMNS="100")
    result = subprocess.run([sys.executable, str(path), "--help"], capture_output=True, text=True,
                            cwd=ROOT, env=env, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"{path} --help failed (exit {result.returncode}):\n{result.stderr}")
    return result.stdout


class ExampleHelp(SphinxDirective):
    has_content = False

    def run(self):
        out = []
        for path in sorted((ROOT / "examples").glob("*.py")):
            self.env.note_dependency(str(path))
            name = f"examples/{path.name}"
            try:
                text = example_help(path)
            except (OSError, RuntimeError, subprocess.SubprocessError) as e:
                logger.warning(str(e), location=self.get_location())
                continue
            out.append(nodes.rubric(text=name, ids=["example-" + path.stem]))
            out.append(nodes.literal_block(text=f"$ python {name} --help\n" + text,
                                           language="text"))
        return out


def setup(app):
    app.add_directive("example-help", ExampleHelp)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
