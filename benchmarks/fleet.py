"""How long ``te-doctor fleet`` takes on 10,000 node snapshots (a large reservation).

Run ``python benchmarks/fleet.py [--nodes N]``. It writes N snapshots derived from the recorded
H100 machine (hostnames and GPU UUIDs differ per node; every 50th node has an older driver)
into a temporary directory, then times, side by side in one run: reading and aggregating all
of them in process (what ``te-doctor fleet DIR`` does after start-up), and the whole
``te-doctor fleet DIR`` command as a process.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from te_doctor.check import load_rule_set
from te_doctor.fleet import aggregate, report_files
from te_doctor.fleet_sample import write_fleet

TEMPLATE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "h100-cuda12-te-ok.json"


def main() -> None:
    """Print the timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="te-doctor-fleet-") as scratch:
        directory = Path(scratch)
        odd = write_fleet(TEMPLATE, directory, args.nodes)
        rules, paths = load_rule_set()
        started = time.perf_counter()
        fleet = aggregate(report_files([directory]), rules, paths)
        in_process = time.perf_counter() - started
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "te_doctor", "fleet", str(directory)],
            capture_output=True,
            check=True,
        )
        whole = time.perf_counter() - started
    found = len(fleet.odd_nodes.get("driver", ()))
    print(
        f"{args.nodes} nodes, {fleet.configurations} distinct configurations, "
        f"{found}/{len(odd)} odd nodes found"
    )
    print(
        f"aggregate in process: {in_process:.2f} s ({in_process / args.nodes * 1000:.3f} ms/node)"
    )
    print(f"te-doctor fleet (whole process): {whole:.2f} s")


if __name__ == "__main__":
    main()
