"""python -m dlarray: the command line of the dlarray package.

With no option it reports versions, every plugin tried (status and reason), every device and the
ops plugins declare. ``--check`` also checks every op on every usable device against NumPy and
times it; ``--cmake-dir`` / ``--include-dir`` print where the SDK is, for building plugins
(``cmake -Ddlarray_DIR=$(python -m dlarray --cmake-dir)``).
"""
import argparse
import inspect
import pathlib
import sys

import numpy as np

import dlarray

_PACKAGE = pathlib.Path(dlarray.__file__).resolve().parent


def _sdk_dir(*parts):
    path = _PACKAGE.joinpath(*parts)
    if not path.is_dir():
        raise SystemExit("dlarray: %s is missing: this installation carries no SDK (install the "
                         "dlarray wheel, or build with `pip install .`)" % path)
    return path


def cmake_dir():
    """The folder holding dlarrayConfig.cmake (for ``-Ddlarray_DIR=``)."""
    return _sdk_dir("lib", "cmake", "dlarray")


def include_dir():
    """The folder holding ``dlarray/plugin_api.h`` and the other SDK headers."""
    return _sdk_dir("include")


def report():
    from dlarray import _config
    text = _config._format(_config._config())
    print(text[:text.index("\nplugins:")])  # versions, the CPU's threads, ISA path and BLAS
    print("\nplugins (search path: " + ", ".join(dlarray._core.plugin_search_path()) + ")")
    for p in dlarray.plugins():
        served = p["device_type"] or "ops only"
        abi = "%d.%d" % tuple(p["abi_version"]) if p["abi_version"][0] else "-"
        print(f"  {p['name']:<14} {p['status']:<22} {served:<9} devices={p['device_count']}  "
              f"ABI {abi}  {p['path']}")
        if p["reason"]:
            print(f"  {'':<14} reason: {_config.plugin_reason(p)}")
    print("\ndevices")
    for ctx in dlarray.devices():
        print(f"  {ctx!r:<10} {dlarray._core.device_name(ctx)}")
    core_ops = set(dlarray.ops.__all__)
    declared = [n for n in dlarray.ops.op_names() if n not in core_ops]
    print("\nops declared by plugins" + ("" if declared else ": none"))
    for name in declared:
        info = dlarray.ops.op_info(name)
        sig = inspect.signature(getattr(dlarray.ops, name))
        print(f"  {name}{sig}  [{info['owner']}; kernels: {', '.join(info['devices']) or 'none'}]")
        if info["doc"]:
            print(f"      {info['doc']}")


def _sync_timer(ctx, fn):
    def run():
        fn()
        dlarray.synchronize(ctx)
    return run


def check(quick):
    from dlarray import _opbench
    rng = np.random.default_rng(0)
    repeat = 3 if quick else 7
    print(f"\nops against NumPy at the seed's sizes (median of {repeat}; ratio = ours / NumPy)")
    header = (f"{'op':<38} {'shape':<22} {'device':<8} {'ok':<4} {'ours':>10} {'rate':>16} "
              f"{'numpy':>10} {'ratio':>7}")
    print(header)
    print("-" * len(header))
    failures = 0
    missing = []  # (op, device) with no kernel: reported, not a failure (plugins may skip devices)
    for ctx in dlarray.devices():
        kind = repr(ctx).split("(")[0]
        for case in _opbench.cases(_opbench.SEED_SIZES, rng):
            if kind not in dlarray.ops.op_info(case.op.split()[0])["devices"]:  # "x (plugin op)"
                if (case.op, kind) not in missing:
                    missing.append((case.op, kind))
                print(f"{case.op:<38} {case.shape_text:<22} {ctx!r:<8} {'-':<4} "
                      f"no kernel on {kind} devices")
                continue
            ok, err = _opbench.check(case, ctx)
            failures += not ok
            args = [dlarray.array(x, ctx) for x in case.inputs]
            out = dlarray.empty(case.out_shape, ctx)
            ours = _opbench.median_time(_sync_timer(ctx, lambda: case.ours(*args, out)), repeat,
                                        min_time=0.05)
            peer = _opbench.time_numpy(case, repeat, 0.05)
            print(f"{case.op:<38} {case.shape_text:<22} {ctx!r:<8} {'yes' if ok else 'NO':<4} "
                  f"{ours * 1e3:8.3f}ms {_opbench.rate(case, ours):>16} {peer * 1e3:8.3f}ms "
                  f"{ours / peer:7.2f}")
    if missing:
        print("\nno kernel (the op cannot run there; not an error): " +
              ", ".join(f"{op} on {kind}" for op, kind in missing))
    if failures:
        print(f"\n{failures} op(s) disagreed with NumPy")
        return 1
    print("\nevery op with a kernel agrees with NumPy on every usable device")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m dlarray",
        description="Report dlarray's plugins, devices and ops; check ops against NumPy; locate "
                    "the SDK for building plugins.")
    parser.add_argument("--version", action="version", version=f"dlarray {dlarray.__version__}")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--cmake-dir", action="store_true",
                       help="print the folder of dlarrayConfig.cmake and exit")
    where.add_argument("--include-dir", action="store_true",
                       help="print the SDK's include folder and exit")
    where.add_argument("--seed-lib", action="store_true",
                       help="print the path of libc_runtime_api.so (the seed's C ABI) and exit")
    parser.add_argument("--check", action="store_true",
                        help="also check every op on every usable device against NumPy and time "
                             "it (the seed's sizes)")
    parser.add_argument("--quick", action="store_true", help="with --check: fewer repetitions")
    args = parser.parse_args(argv)
    if args.cmake_dir:
        print(cmake_dir())
        return 0
    if args.include_dir:
        print(include_dir())
        return 0
    if args.seed_lib:
        print(dlarray.seed_lib_path())
        return 0
    report()
    return check(args.quick) if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
