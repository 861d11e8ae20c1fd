"""The benchmarks' JSON reports (bench/*.py --json) record the machine, and the docs render every
committed report (docs/benchmarks/*.json) into tables that say what the files say."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "docs" / "_ext"))
sys.path.insert(0, str(ROOT / "bench"))
import benchmark_report  # noqa: E402

COMMITTED = sorted((ROOT / "docs" / "benchmarks").glob("*.json"))
MACHINE_KEYS = {"date", "cpu", "cpu_count", "gpus", "devices", "os", "versions", "git_commit",
                "command", "load_average"}


def test_there_is_a_cpu_report():
    kinds = {json.loads(p.read_text())["benchmark"] for p in COMMITTED}
    assert {"ops", "mlp_step"} <= kinds, "docs/benchmarks/ needs an ops and an mlp_step report"


@pytest.mark.parametrize("path", COMMITTED, ids=[p.name for p in COMMITTED])
def test_committed_report_renders(path):
    data = json.loads(path.read_text())
    assert MACHINE_KEYS <= set(data["machine"]), path
    assert data["machine"]["cpu"] and data["machine"]["versions"]["dlarray"]
    report = benchmark_report.report(path)
    fields = dict(report["fields"])
    assert fields["CPU"].startswith(data["machine"]["cpu"])
    assert fields["Date"] == data["machine"]["date"]
    assert report["rows"] and all(len(r) == len(report["header"]) for r in report["rows"])
    if data["benchmark"] == "ops":
        assert len(report["rows"]) == len(data["rows"])
        for row, raw in zip(report["rows"], data["rows"]):
            assert row[0] == raw["op"] and row[5] == f"{raw['ratio']:.2f}"
            assert row[7] == ("yes" if raw["ok"] else "NO")


def ops_json(**changes):
    data = {"benchmark": "ops", "device": "Test CPU", "peer": "numpy",
            "settings": {"repeat": 5},
            "machine": {"date": "2026-01-02T03:04:05+00:00", "cpu": "Test CPU", "cpu_count": 2,
                        "gpus": [], "devices": ["cpu(0): Test CPU"], "os": "Linux",
                        "versions": {"dlarray": "9.9.9", "numpy": "2.0"}, "git_commit": "abc",
                        "command": "python bench/ops.py", "load_average": [0.1, 0.2, 0.3]},
            "rows": [{"sizes": "seed", "op": "relu", "shape": "500x200", "ok": True,
                      "rel_err": 0.0, "ours_s": 2.5e-5, "peer_s": 5e-5, "ratio": 0.5,
                      "rate": "  8.0 GB/s  "}]}
    data.update(changes)
    return data


def test_ops_report_values(tmp_path):
    path = tmp_path / "ops_cpu_test.json"
    path.write_text(json.dumps(ops_json()))
    report = benchmark_report.report(path)
    assert report["header"][4] == "NumPy"
    assert report["rows"] == [["relu", "500x200", "seed", "25.0 us", "50.0 us", "0.50",
                               "8.0 GB/s", "yes"]]
    assert [benchmark_report.seconds(v) for v in (1.5, 0.1, 4.3e-3, 1e-7, 5e-10)] == [
        "1.50 s", "100 ms", "4.30 ms", "100 ns", "0.500 ns"]
    assert report["anchor"] == "bench-ops-cpu-test"
    assert ("Load average at start", "0.1 / 0.2 / 0.3 (1 / 5 / 15 min)") in report["fields"]


def test_broken_report_names_the_file(tmp_path):
    data = ops_json()
    del data["machine"]["cpu"]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    with pytest.raises(benchmark_report.ReportError, match=r"broken\.json.*'cpu'"):
        benchmark_report.report(path)
    path.write_text(json.dumps(ops_json(benchmark="nope")))
    with pytest.raises(benchmark_report.ReportError, match="broken.json.*'nope'"):
        benchmark_report.report(path)


def test_bench_scripts_write_renderable_reports(tmp_path):
    """A tiny run of each benchmark writes a report the docs can render."""
    def bench(script, *args):
        r = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args],
                           capture_output=True, text=True, cwd=tmp_path, timeout=300)
        assert r.returncode == 0, "%s exited %d:\n%s" % (script, r.returncode, r.stderr[-3000:])

    ops = tmp_path / "ops.json"
    bench("ops.py", "--sizes", "seed", "--only", "relu", "--repeat", "1", "--min-time", "0",
          "--json", str(ops))
    mlp = tmp_path / "mlp_step.json"
    bench("mlp_step.py", "--device", "cpu", "--repeats", "1", "--inner", "1", "--epoch-repeats",
          "1", "--json", str(mlp))
    for path in (ops, mlp):
        data = json.loads(path.read_text())
        assert MACHINE_KEYS <= set(data["machine"])
        assert data["machine"]["versions"]["dlarray"] == (ROOT / "VERSION").read_text().strip()
        assert benchmark_report.report(path)["rows"]


@pytest.mark.parametrize("script", ["ops.py", "mlp_step.py"])
def test_bench_refuses_unwritable_json_path(script, tmp_path):
    bad = tmp_path / "missing" / "out.json"
    result = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--json", str(bad)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "does not exist" in result.stderr, result.stderr


def test_compare_takes_the_median_of_rounds(tmp_path):
    """bench/compare.py: each side's time is the median of its rounds, the ratio is this tree's
    over the baseline's, and rows past --slower are named."""
    def report(name, times, extra_op=False):
        paths = []
        for i, t in enumerate(times):
            data = ops_json()
            data["rows"][0].update(ours_s=t, ratio=t / 5e-5)
            if extra_op:
                data["rows"].append(dict(data["rows"][0], op="exp"))
            paths.append(tmp_path / f"{name}{i}.json")
            paths[-1].write_text(json.dumps(data))
        return [str(p) for p in paths]

    ours = report("ours", [3e-5, 9e-5, 3.3e-5], extra_op=True)
    base = report("base", [2e-5, 3e-5, 1e-4])
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "compare.py"), "--ours", *ours,
                          "--base", *base], capture_output=True, text=True, check=True).stdout
    assert "| relu | 500x200 | 30.00 | 33.00 | 1.10 | 0.60 | 0.66 |" in out
    assert "| exp | 500x200 | (new) | 33.00 |" in out
    assert out.rstrip().endswith("more than 5%: relu 500x200: 1.10x")
