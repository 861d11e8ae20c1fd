#!/usr/bin/env python3
"""Mutation testing, run by hand: does the test suite notice small deliberate bugs?

Each mutant in tests/mutants.json is one exact text replacement in one file (a comparison turned
around, a check removed, an accumulator narrowed), with the test commands that must fail on it
and the bug or issue it comes from; "also" may list other places (file, original, replacement)
for the same bug where the code may have moved, the first that matches is used. For each mutant this script

1. mirrors the working tree as it is now (tracked files and untracked ones git does not ignore)
   into build/mutation/tree, rewriting only the files whose content changed since the last run,
   so that the build there stays incremental;
2. applies the mutant to the mirror (its original text must occur exactly once in the file);
3. builds the mirror as `make install` does (pip wheel, CMake build folder
   build/mutation/tree/build/py, the C++ tests and test plugins included; CMAKE_ARGS and ccache
   settings are passed through) and installs the wheel into build/mutation/site, a --target folder
   put first on PYTHONPATH;
4. runs the mutant's commands in the mirror's root and restores the file.

A mutant is *killed* when one of its commands fails, *survived* when all pass; every command
runs (unless --first-kill), and the table says which failed. Before the
mutants, the unmutated mirror is built and every command run once (the baseline): a command
that fails there, or names a test that does not exist or only skips here (pytest exit 4 or 5, or
nothing passed; ctest "No tests were found"), makes its mutants *no test* instead, since they would be killed for nothing. A mutant
whose original text is not found is *not applied*; one that does not build is *no build*. The
table lists each mutant's result and timings; the exit status is 1 unless every mutant run was
killed.

Your tree and your .venv are never written: everything happens under build/mutation/ (git ignores
build/). An interrupted run (Ctrl-C) restores the mirror's file on the way out, and the next run
re-syncs the mirror anyway.

Commands are shell lines run from the mirror's root; {python} is the interpreter (--python, by
default .venv/bin/python of this tree) and {build} the mirror's build folder. The environment has
PYTHONPATH (the mirror's package first) and DLARRAY_TEST_PLUGIN_DIR (the mirror's test plugins).

Usage:
  scripts/mutation_test.py                      # every mutant (a full build first: minutes)
  scripts/mutation_test.py --only relu_gradient_ge_f32,softmax_shift_by_first
  scripts/mutation_test.py --list
Keep the list growing: every bug fixed gets a mutant that puts it back, with the test that
catches it.
"""
import argparse
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
WORK = ROOT / "build" / "mutation"
TREE = WORK / "tree"
SITE = WORK / "site"
WHEELS = WORK / "wheel"
MANIFEST = WORK / "manifest.json"
FIELDS = ("id", "file", "original", "replacement", "tests", "origin")


def load_mutants(path):
    mutants = json.loads(path.read_text())["mutants"]
    seen = set()
    for m in mutants:
        missing = [f for f in FIELDS if f not in m]
        if missing:
            raise SystemExit(f"{path}: mutant {m.get('id', '?')} lacks {', '.join(missing)}")
        if m["id"] in seen:
            raise SystemExit(f"{path}: mutant id {m['id']} appears twice")
        if m["original"] == m["replacement"]:
            raise SystemExit(f"{path}: mutant {m['id']} replaces its text with itself")
        seen.add(m["id"])
    return mutants


def tree_files():
    """The working tree's files as git sees them: tracked (unless deleted) and untracked ones
    that are not ignored."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, check=True, capture_output=True).stdout
    names = sorted({n for n in out.decode().split("\0") if n})
    return [n for n in names if (ROOT / n).is_file() and not (ROOT / n).is_symlink()]


def write_if_changed(dst, data):
    """Writes data unless dst already holds it; a write gives dst a new mtime, so the build
    recompiles what depends on it."""
    if dst.is_file() and dst.read_bytes() == data:
        return False
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".mutation-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, dst)
    return True


def sync_mirror():
    files = tree_files()
    changed = 0
    for name in files:
        src = ROOT / name
        dst = TREE / name
        changed += write_if_changed(dst, src.read_bytes())
        shutil.copymode(src, dst)
    previous = set(json.loads(MANIFEST.read_text())) if MANIFEST.is_file() else set()
    for gone in previous - set(files):  # deleted since: a CMake glob must not find it
        (TREE / gone).unlink(missing_ok=True)
    MANIFEST.write_text(json.dumps(files))
    # The tests read the seeds from ../shared beside the tree's root (tests/python/seed_client.py):
    # the mirror's ../shared is a link to the tree's, or the seed tests skip and their mutants
    # survive for nothing.
    shared, link = ROOT.parent / "shared", TREE.parent / "shared"
    if shared.is_dir() and not link.exists():
        link.unlink(missing_ok=True)  # a dangling link
        link.symlink_to(shared)
    return len(files), changed


def build(python, log):
    """Builds the mirror and installs it into SITE; returns (ok, seconds)."""
    t0 = time.monotonic()
    shutil.rmtree(WHEELS, ignore_errors=True)
    steps = [
        [python, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps", "-w",
         str(WHEELS), "--config-settings=build-dir=build/py",
         "--config-settings=cmake.define.DLARRAY_BUILD_TESTS=ON", "."],
    ]
    with open(log, "a") as f:
        for cmd in steps:
            f.write("$ " + shlex.join(cmd) + "\n")
            f.flush()
            if subprocess.run(cmd, cwd=TREE, stdout=f, stderr=subprocess.STDOUT).returncode:
                return False, time.monotonic() - t0
        wheels = sorted(WHEELS.glob("dlarray-*.whl"))
        if len(wheels) != 1:
            f.write(f"expected one wheel in {WHEELS}, found {wheels}\n")
            return False, time.monotonic() - t0
        shutil.rmtree(SITE, ignore_errors=True)
        cmd = [python, "-m", "pip", "install", "-q", "--no-deps", "--target", str(SITE),
               str(wheels[0])]
        f.write("$ " + shlex.join(cmd) + "\n")
        f.flush()
        ok = subprocess.run(cmd, cwd=TREE, stdout=f, stderr=subprocess.STDOUT).returncode == 0
    return ok, time.monotonic() - t0


def test_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SITE)] + ([env["PYTHONPATH"]]
                                                       if env.get("PYTHONPATH") else []))
    env["DLARRAY_TEST_PLUGIN_DIR"] = str(TREE / "build" / "py" / "test_plugins")
    env["DLARRAY_WHEEL_DIR"] = str(WHEELS)
    env.pop("DLARRAY_PLUGIN_PATH", None)
    return env


def run_command(command, python, timeout, log):
    """Runs one test command; returns "pass", "fail", "missing" or "timeout"."""
    line = command.format(python=shlex.quote(python), build=shlex.quote(str(TREE / "build/py")))
    with open(log, "a") as f:
        f.write("$ " + line + "\n")
        f.flush()
        try:
            r = subprocess.run(line, shell=True, cwd=TREE, env=test_env(), timeout=timeout,
                               capture_output=True, text=True)
        except subprocess.TimeoutExpired:
            f.write("timed out\n")
            return "timeout"
        f.write(r.stdout + r.stderr)
    out = r.stdout + r.stderr
    if "No tests were found" in out:
        return "missing"
    if "pytest" in line and r.returncode in (4, 5):  # usage error (no such test) or none selected
        return "missing"
    if "pytest" in line and r.returncode == 0 and " passed" not in out:  # every test skipped
        return "missing"
    return "pass" if r.returncode == 0 else "fail"


def short(command):
    """A command without the options every command shares, for the table."""
    for common in ("{python} -m pytest -q -x -p no:cacheprovider ",
                   "ctest --test-dir {build} --output-on-failure "):
        command = command.replace(common, "pytest " if "pytest" in common else "ctest ")
    return command


def apply(mutant):
    """Applies mutant to the mirror: its own place, else the first of its "also" places (the
    same bug where code moved, e.g. before and after a branch merges) whose original text is
    there exactly once. Returns (file, original contents), or None."""
    for place in [mutant] + mutant.get("also", []):
        path = TREE / place["file"]
        if not path.is_file():
            continue
        text = path.read_text()
        if text.count(place["original"]) == 1:
            path.write_text(text.replace(place["original"], place["replacement"]))
            return place["file"], text
    return None


def restore(applied):
    # A fresh write (new mtime): the next build recompiles the file without the mutant.
    name, text = applied
    (TREE / name).write_text(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mutants", type=pathlib.Path, default=ROOT / "tests" / "mutants.json")
    ap.add_argument("--only", help="comma-separated mutant ids")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--python", help="interpreter with the test dependencies "
                    "(default: .venv/bin/python of this tree, else this one)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per test command")
    ap.add_argument("--first-kill", action="store_true",
                    help="stop a mutant's commands at the first that fails (default: run all, "
                    "to show which tests catch it)")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the unmutated run (only when it is known to pass)")
    args = ap.parse_args()

    mutants = load_mutants(args.mutants)
    if args.list:
        for m in mutants:
            print(f"{m['id']:40} {m['file']}  ({m['origin']})")
        return 0
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        unknown = sorted(set(wanted) - {m["id"] for m in mutants})
        if unknown:
            raise SystemExit("unknown mutant ids: " + ", ".join(unknown))
        mutants = [m for m in mutants if m["id"] in wanted]
    venv = ROOT / ".venv" / "bin" / "python"
    python = args.python or (str(venv) if venv.exists() else sys.executable)

    WORK.mkdir(parents=True, exist_ok=True)
    log = WORK / "mutation.log"
    log.write_text("")
    n, changed = sync_mirror()
    print(f"mirror {TREE}: {n} files, {changed} rewritten; log {log}", flush=True)

    results = []  # (id, status, build s, test s, detail)
    baseline = {}
    if not args.no_baseline:
        ok, secs = build(python, log)
        if not ok:
            print(f"the unmutated tree does not build ({secs:.0f} s): see {log}")
            return 2
        print(f"baseline build {secs:.0f} s", flush=True)
        for cmd in dict.fromkeys(c for m in mutants for c in m["tests"]):
            t0 = time.monotonic()
            baseline[cmd] = run_command(cmd, python, args.timeout, log)
            print(f"  baseline {baseline[cmd]:7} {time.monotonic() - t0:6.0f} s  {cmd}",
                  flush=True)

    for m in mutants:
        bad = [c for c in m["tests"] if baseline.get(c, "pass") != "pass"]
        if bad:
            results.append((m["id"], "no test", 0, 0,
                            f"{baseline[bad[0]]} unmutated: {short(bad[0])}"))
            print(f"{m['id']}: no test ({baseline[bad[0]]} without the mutant)", flush=True)
            continue
        applied = apply(m)
        if applied is None:
            results.append((m["id"], "not applied", 0, 0,
                            f"original text not found once in {m['file']}"))
            print(f"{m['id']}: not applied", flush=True)
            continue
        try:
            with open(log, "a") as f:
                f.write(f"\n=== mutant {m['id']}: {applied[0]}\n")
            ok, build_s = build(python, log)
            if not ok:
                results.append((m["id"], "no build", build_s, 0, f"see {log}"))
                print(f"{m['id']}: no build", flush=True)
                continue
            t0 = time.monotonic()
            failed = []
            for cmd in m["tests"]:
                r = run_command(cmd, python, args.timeout, log)
                if r in ("fail", "timeout"):
                    failed.append(short(cmd) + (" (timeout)" if r == "timeout" else ""))
                    if args.first_kill:
                        break
            status = "killed" if failed else "survived"
            detail = (f"{len(failed)}/{len(m['tests'])} failed: " + "; ".join(failed)
                      if failed else "every command passed")
            results.append((m["id"], status, build_s, time.monotonic() - t0, detail))
            print(f"{m['id']}: {status}", flush=True)
        finally:
            restore(applied)

    print()
    width = max([len(r[0]) for r in results] + [6])
    print(f"{'mutant':{width}}  {'result':11}  {'build':>6}  {'tests':>6}  detail")
    for mid, status, b, t, detail in results:
        print(f"{mid:{width}}  {status:11}  {b:5.0f}s  {t:5.0f}s  {detail}")
    killed = sum(r[1] == "killed" for r in results)
    print(f"\n{killed} of {len(results)} killed")
    return 0 if killed == len(results) else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("\ninterrupted: your tree is untouched; the mirror is restored", file=sys.stderr)
        sys.exit(130)
