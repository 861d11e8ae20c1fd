"""Compare bench/ops.py reports of two trees measured in the same session: the rows of each tree's
rounds (run alternately, so that clock and load drift fall on both) are reduced to the median of
the rounds' medians, and each row shows this tree's time over the baseline's, with each side's
ratio to the peer (NumPy or PyTorch) of its own rounds.

Usage: python bench/compare.py --ours A1.json A2.json ... --base B1.json B2.json ... [--md]
Exit status 0; the verdict is for a person: rows above --slower (default 1.05) are listed last.
"""
import argparse
import json
import statistics


def load(paths):
    rounds = [json.load(open(p)) for p in paths]
    rows = {}
    for report in rounds:
        for r in report["rows"]:
            rows.setdefault((r["sizes"], r["op"], r["shape"]), []).append(r)
    return rounds[0], rows


def med(rows, field):
    return statistics.median(r[field] for r in rows)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ours", nargs="+", required=True, help="this tree's JSON reports")
    p.add_argument("--base", nargs="+", required=True, help="the baseline's JSON reports")
    p.add_argument("--slower", type=float, default=1.05, help="ratio listed as slower")
    args = p.parse_args()
    head, ours = load(args.ours)
    _, base = load(args.base)
    print(f"{head['device']}, {head['machine']['date']}: {len(args.ours)} rounds of this tree "
          f"and {len(args.base)} of the baseline, alternating; times are medians of the rounds' "
          f"medians; peer = {head['peer']}")
    print("| op | shape | baseline us | this tree us | this / baseline | baseline / peer | "
          "this / peer |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    slower = []
    for key, rows in ours.items():
        t = med(rows, "ours_s")
        if key not in base:
            print(f"| {key[1]} | {key[2]} | (new) | {t * 1e6:.2f} | | | {med(rows, 'ratio'):.2f} |")
            continue
        b = med(base[key], "ours_s")
        print(f"| {key[1]} | {key[2]} | {b * 1e6:.2f} | {t * 1e6:.2f} | {t / b:.2f} | "
              f"{med(base[key], 'ratio'):.2f} | {med(rows, 'ratio'):.2f} |")
        if t / b > args.slower:
            slower.append(f"{key[1]} {key[2]}: {t / b:.2f}x")
    print("slower than the baseline by more than {:.0%}: {}".format(
        args.slower - 1, "; ".join(slower) if slower else "none"))


if __name__ == "__main__":
    main()
