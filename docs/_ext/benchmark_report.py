"""Benchmark JSON (bench/ops.py --json, bench/mlp_step.py --json FILE) -> tables to render.

Pure Python, no Sphinx: benchmark_tables.py turns these tables into the docs page, and the tests
check them without Sphinx. A report is a dict with ``title``, ``anchor``, ``fields`` (the machine:
``(name, text)`` pairs), ``header`` and ``rows`` (strings) and ``notes``.
"""
import json
import pathlib
import re

PEER_NAMES = {"numpy": "NumPy", "torch": "PyTorch"}


class ReportError(ValueError):
    """A benchmark file that cannot be rendered; the message names the file and the problem."""


def seconds(value):
    """A duration in the unit that shows it with three significant digits (``4.30 ms``)."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if value >= scale or unit == "ns":
            return f"{value / scale:#.3g}".rstrip(".") + f" {unit}"


def ratio(value):
    return f"{value:.2f}"


def machine_fields(machine):
    """The machine a report ran on, as (name, text) pairs."""
    versions = ", ".join(f"{k} {v}" for k, v in machine["versions"].items())
    load = machine.get("load_average")
    fields = [
        ("CPU", f"{machine['cpu']} ({machine['cpu_count']} logical CPUs)"),
        ("GPU", "; ".join(machine.get("gpus") or []) or "none"),
        ("dlarray devices", ", ".join(machine.get("devices") or []) or "none"),
        ("Date", machine["date"]),
        ("OS", machine.get("os", "unknown")),
        ("Versions", versions),
        ("Commit", machine.get("git_commit") or "unknown"),
        ("Command", machine.get("command", "unknown")),
    ]
    if load:
        fields.append(("Load average at start", " / ".join(map(str, load)) + " (1 / 5 / 15 min)"))
    return fields


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def ops_report(data):
    peer = PEER_NAMES.get(data["peer"], data["peer"])
    rows = []
    for r in data["rows"]:
        rows.append([r["op"], r["shape"], r["sizes"], seconds(r["ours_s"]), seconds(r["peer_s"]),
                     ratio(r["ratio"]), (r.get("rate") or "").strip(),
                     "yes" if r["ok"] else "NO"])
    settings = data.get("settings", {})
    notes = [f"Median of {settings['repeat']} runs per side" if "repeat" in settings else
             "Medians", f"ratio = ours / {peer} (below 1: dlarray is faster)",
             "correct = our result agrees with NumPy's"]
    return {
        "title": f"Every op on {data['device']}, against {peer}",
        "fields": machine_fields(data["machine"]),
        "header": ["op", "shape", "sizes", "dlarray", peer, "ratio", "rate", "correct"],
        "rows": rows,
        "notes": notes,
    }


def mlp_step_report(data):
    rows = []
    if "torch_step_ms" in data:
        rows.append([f"training step, batch {data['batch']}", data["device"],
                     seconds(data["step_ms"] / 1e3), "PyTorch eager",
                     seconds(data["torch_step_ms"] / 1e3), ratio(data["step_ratio"])])
    else:
        rows.append([f"training step, batch {data['batch']}", data["device"],
                     seconds(data["step_ms"] / 1e3), "PyTorch eager",
                     data.get("torch_note", "not measured"), ""])
    rows.append(["epoch of mnist10k (8,000 images, batch 100)", "cpu(0)",
                 seconds(data["epoch_cpu_s"]), "NumPy executor",
                 seconds(data["epoch_numpy_s"]), ratio(data["epoch_ratio"])])
    return {
        "title": f"MLP {data['model']} training on {data['device']}",
        "fields": machine_fields(data["machine"]),
        "header": ["what", "device", "dlarray", "peer", "peer's time", "ratio"],
        "rows": rows,
        "notes": [f"{data['step_allocations']} allocations during the timed steps",
                  "ratio = ours / peer's (below 1: dlarray is faster)"],
    }


RENDERERS = {"ops": ops_report, "mlp_step": mlp_step_report}


def report(path):
    """The report of one JSON file; ReportError naming the file when it cannot be rendered."""
    path = pathlib.Path(path)
    try:
        data = json.loads(path.read_text())
        kind = data.get("benchmark")
        if kind not in RENDERERS:
            raise ReportError(f"'benchmark' is {kind!r}, expected one of {sorted(RENDERERS)}")
        result = RENDERERS[kind](data)
    except (KeyError, TypeError, ValueError) as e:
        detail = f"missing field {e}" if isinstance(e, KeyError) else str(e)
        raise ReportError(f"{path}: cannot render this benchmark file: {detail}") from e
    result["anchor"] = "bench-" + slug(path.stem)
    result["source"] = path.name
    return result


def reports(folder):
    """Reports of every ``*.json`` in ``folder``: ops first, then the rest, each by file name."""
    paths = sorted(pathlib.Path(folder).glob("*.json"))
    out = [report(p) for p in paths]
    return sorted(out, key=lambda r: (not r["title"].startswith("Every op"), r["source"]))
