"""Start-up time: medians of whole-process runs of ``algorank --help`` and ``python -c "import algorank"``.

Each command runs ``--runs`` times in a fresh Python process (after one warm-up run that fills the
file cache); the median, minimum and maximum wall seconds are printed, with ``python -c pass`` as
the floor of any Python process on the machine.  Targets (README): ``--help`` <= 0.3 s and
``import algorank`` <= 0.6 s.  The algorank of the current ``PYTHONPATH`` / environment is timed.

Usage::

    python tests/benchmarks/bench_startup.py [--runs 21] [--out startup.csv]
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import algorank'": [sys.executable, "-c", "import algorank"],
    "algorank --help": [sys.executable, "-m", "algorank", "--help"],
    "algorank rank --p (argument error)": [sys.executable, "-m", "algorank", "rank", "--p"],
}


def time_command(argv: list[str], runs: int) -> list[float]:
    """Wall seconds of ``runs`` fresh processes running ``argv`` (after one warm-up run)."""
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=os.environ)
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--out", help="CSV of every run")
    args = parser.parse_args()
    rows = []
    print(f"{'command':<38}{'median':>9}{'min':>9}{'max':>9}")
    for name, argv in COMMANDS.items():
        times = time_command(argv, args.runs)
        rows += [{"command": name, "run": i, "seconds": t} for i, t in enumerate(times)]
        print(f"{name:<38}{statistics.median(times):>9.3f}{min(times):>9.3f}{max(times):>9.3f}")
    if args.out:
        with open(args.out, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=["command", "run", "seconds"])
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
