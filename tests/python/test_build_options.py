"""The build options table (README.md, included by docs/install.md) lists exactly the options the
CMake files declare, with their values and defaults."""
import re

from conftest import ROOT

START, END = "<!-- build-options: start -->", "<!-- build-options: end -->"


def cmake_files():
    return [p for p in sorted(ROOT.rglob("CMakeLists.txt")) + sorted(ROOT.rglob("*.cmake"))
            if not ({"build", "_build", "tests", ".venv"} & set(p.relative_to(ROOT).parts))
            and not p.relative_to(ROOT).parts[0].startswith(".")]


def declared(texts):
    """{option: (allowed values, default)} of ``option(DLARRAY_X "..." default)`` and
    ``set(DLARRAY_X "default" CACHE STRING ...)`` with its ``PROPERTY STRINGS`` list."""
    options = {}
    for text in texts:
        for name, default in re.findall(r"option\(\s*(DLARRAY_\w+)\s+\"[^\"]*\"\s+([^)\s]+)\s*\)",
                                        text):
            options[name] = ({"ON", "OFF"}, default)
        for name, default in re.findall(r"set\(\s*(DLARRAY_\w+)\s+\"([^\"]*)\"\s+CACHE\s+STRING",
                                        text):
            values = re.search(r"set_property\(CACHE\s+%s\s+PROPERTY\s+STRINGS\s+([^)]*)\)" % name,
                               text)
            options[name] = (set(values.group(1).split()) if values else set(), default)
    return options


def documented(readme):
    """{option: (values, the one marked default)} of the README's table."""
    table = readme.split(START, 1)[1].split(END, 1)[0]
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.fullmatch(r"`(DLARRAY_\w+)`", cells[0]) if len(cells) == 3 else None
        if m:
            # Words (ON, AUTO) and flags (-O3), not `DLARRAY_X` (a reference).
            values = set(re.findall(r"`([-A-Z0-9]+)`", cells[1]))
            default = re.search(r"`([-\w]+)` \(default", cells[1])
            rows[m.group(1)] = (values, default.group(1) if default else None)
    return rows


def test_table_matches_cmake():
    options = declared(p.read_text() for p in cmake_files())
    rows = documented((ROOT / "README.md").read_text())
    assert set(options) - set(rows) == set(), "CMake options missing from the README's table"
    assert set(rows) - set(options) == set(), "README rows for options CMake no longer declares"
    for name, (values, default) in options.items():
        doc_values, doc_default = rows[name]
        assert doc_values == values, (name, doc_values, values)
        if default.startswith("${"):  # a default computed from another option or the build
            assert doc_default is None or doc_default in ("ON", "OFF"), name
        else:
            assert doc_default == default, (name, doc_default, default)


def test_install_page_includes_the_table():
    page = (ROOT / "docs" / "install.md").read_text()
    block = re.search(r"```\{include\} \.\./README\.md\n:start-after: (.*)\n:end-before: (.*)\n```",
                      page)
    assert block and block.groups() == (START, END), "docs/install.md must include the README table"
    section = page.split("## Build options", 1)[1].split("\n## ", 1)[0]
    assert "`DLARRAY_" not in section, "options listed by hand in install.md drift: use the include"


def test_parsers():
    cmake = '\n'.join([
        'option(DLARRAY_A "doc (x)" OFF)', 'option(DLARRAY_B\n  "doc"\n  ${other})',
        'set(DLARRAY_C "AUTO" CACHE STRING "doc")',
        'set_property(CACHE DLARRAY_C PROPERTY STRINGS AUTO ON OFF)',
        'set(DLARRAY_OUTPUT_DIR "${CMAKE_BINARY_DIR}/dlarray")'])
    assert declared([cmake]) == {"DLARRAY_A": ({"ON", "OFF"}, "OFF"),
                                 "DLARRAY_B": ({"ON", "OFF"}, "${other}"),
                                 "DLARRAY_C": ({"AUTO", "ON", "OFF"}, "AUTO")}
    readme = "\n".join([START, "| option | values | what |", "| --- | --- | --- |",
                        "| `DLARRAY_A` | `ON`, `OFF` (default) | x |",
                        "| `DLARRAY_C` | `AUTO` (default), `ON`, as `DLARRAY_A` | x |", END,
                        "| `DLARRAY_Z` | `ON` | outside the table |"])
    assert documented(readme) == {"DLARRAY_A": ({"ON", "OFF"}, "OFF"),
                                  "DLARRAY_C": ({"AUTO", "ON"}, "AUTO")}
