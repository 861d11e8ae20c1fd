"""python -m dlarray: versions, every plugin with its status and reason, every device, then every
op on every usable device checked against NumPy and timed (seed sizes; bench/ops.py has more).
``--quick``: fewer timing repeats. ``--version``: print the version and stop."""
import platform
import sys

import numpy as np

import dlarray
from dlarray import _opbench


def _sync_timer(ctx, fn):
    def run():
        fn()
        dlarray.synchronize(ctx)
    return run


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--version" in argv:
        print(f"dlarray {dlarray.__version__}")
        return 0
    quick = "--quick" in argv
    print(f"dlarray {dlarray.__version__} (plugin ABI {dlarray._core.PLUGIN_ABI_VERSION}), "
          f"Python {platform.python_version()}, NumPy {np.__version__}")
    print("\nplugins (search path: " + ", ".join(dlarray._core.plugin_search_path()) + ")")
    for p in dlarray.plugins():
        served = p["device_type"] or "ops only"
        print(f"  {p['name']:<14} {p['status']:<22} {served:<9} "
              f"devices={p['device_count']}  {p['path']}")
        if p["reason"]:
            print(f"  {'':<14} reason: {p['reason']}")
    print("\ndevices")
    for ctx in dlarray.devices():
        print(f"  {ctx!r:<10} {dlarray._core.device_name(ctx)}")

    rng = np.random.default_rng(0)
    repeat = 3 if quick else 7
    print(f"\nops against NumPy at the seed's sizes (median of {repeat}; ratio = ours / NumPy)")
    header = (f"{'op':<38} {'shape':<22} {'device':<8} {'ok':<4} {'ours':>10} {'rate':>16} "
              f"{'numpy':>10} {'ratio':>7}")
    print(header)
    print("-" * len(header))
    failures = 0
    for ctx in dlarray.devices():
        for case in _opbench.cases(_opbench.SEED_SIZES, rng):
            ok, err = _opbench.check(case, ctx)
            failures += not ok
            args = [dlarray.array(x, ctx) for x in case.inputs]
            out = dlarray.empty(case.out_shape, ctx)
            _opbench.let_peer_idle()
            ours = _opbench.median_time(_sync_timer(ctx, lambda: case.ours(*args, out)), repeat,
                                         min_time=0.05)
            peer = _opbench.time_numpy(case, repeat, 0.05)
            print(f"{case.op:<38} {case.shape_text:<22} {ctx!r:<8} {'yes' if ok else 'NO':<4} "
                  f"{ours * 1e3:8.3f}ms {_opbench.rate(case, ours):>16} {peer * 1e3:8.3f}ms "
                  f"{ours / peer:7.2f}")
    if failures:
        print(f"\n{failures} op(s) disagreed with NumPy")
        return 1
    print("\nevery op agrees with NumPy on every usable device")
    return 0


if __name__ == "__main__":
    sys.exit(main())
