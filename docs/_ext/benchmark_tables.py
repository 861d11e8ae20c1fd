"""The ``benchmark-tables`` directive: one heading, the machine and a table per JSON file of
``benchmark_tables_dir`` (docs/benchmarks), rendered at build time (benchmark_report.py)."""
from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

import benchmark_report

logger = logging.getLogger(__name__)


def table(header, rows):
    """A docutils table with a header row."""
    tgroup = nodes.tgroup(cols=len(header))
    for i, title in enumerate(header):
        tgroup += nodes.colspec(colwidth=max([len(title)] + [len(str(r[i])) for r in rows]))

    def row(cells):
        r = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            entry += nodes.paragraph(text=str(cell))
            r += entry
        return r

    thead = nodes.thead()
    thead += row(header)
    tbody = nodes.tbody()
    for cells in rows:
        tbody += row(cells)
    tgroup += thead
    tgroup += tbody
    result = nodes.table(classes=["benchmark-table"])
    result += tgroup
    return result


def field_list(fields):
    result = nodes.field_list()
    for name, text in fields:
        field = nodes.field()
        field += nodes.field_name(text=name)
        body = nodes.field_body()
        body += nodes.paragraph(text=text)
        field += body
        result += field
    return result


class BenchmarkTables(SphinxDirective):
    """Renders every benchmark JSON file; a file that cannot be rendered is a warning (an error
    with -W), which names it."""

    has_content = False

    def run(self):
        folder = self.config.benchmark_tables_dir
        for path in sorted(folder.glob("*.json")):
            self.env.note_dependency(str(path))
        try:
            reports = benchmark_report.reports(folder)
        except benchmark_report.ReportError as e:
            logger.warning(str(e), location=self.get_location())
            return []
        if not reports:
            logger.warning(f"no benchmark JSON files in {folder}", location=self.get_location())
            return []
        out = []
        for r in reports:
            heading = nodes.rubric(text=r["title"], ids=[r["anchor"]], classes=["benchmark"])
            out += [heading, field_list(r["fields"] + [("File", r["source"])]),
                    table(r["header"], r["rows"]),
                    nodes.paragraph(text="; ".join(r["notes"]) + ".")]
        return out


def setup(app):
    app.add_config_value("benchmark_tables_dir", None, "env")
    app.add_directive("benchmark-tables", BenchmarkTables)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
