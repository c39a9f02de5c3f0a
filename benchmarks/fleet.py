"""How long ``te-doctor fleet`` takes on 10,000 node reports (a large reservation).

Run ``python benchmarks/fleet.py [--nodes N]``. It writes N node reports, as ``te-doctor
fleet node`` writes them, derived from the recorded H100 machine (hostnames and GPU UUIDs
differ per node; every 50th node has an older driver, every 400th lost its cuDNN, every 250th
shows two GPUs fewer) into a temporary directory, then times, side by side in one run: reading
and aggregating all of them in process (what ``te-doctor fleet DIR`` does after start-up), and
the whole ``te-doctor fleet DIR`` command as a process.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from te_doctor.check.pipeline import load_rule_set
from te_doctor.fleet.aggregate import aggregate
from te_doctor.fleet.reading import report_files
from te_doctor.fleet.sample import write_fleet

TEMPLATE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "h100-cuda12-te-ok.json"


def main() -> None:
    """Print the timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="te-doctor-fleet-") as scratch:
        directory = Path(scratch)
        odd = write_fleet(TEMPLATE, directory, args.nodes, no_cudnn_every=400, fewer_gpus_every=250)
        rules, paths = load_rule_set()
        started = time.perf_counter()
        fleet = aggregate(report_files([directory]), rules, paths)
        in_process = time.perf_counter() - started
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "te_doctor", "fleet", str(directory)],
            capture_output=True,
            text=True,
        )
        whole = time.perf_counter() - started
    found = {label: len(fleet.odd_nodes.get(label, ())) for label in ("driver", "cuDNN", "GPUs")}
    written = {
        "driver": len(odd.old_driver),
        "cuDNN": len(odd.no_cudnn),
        "GPUs": len(odd.fewer_gpus),
    }
    print(f"{args.nodes} nodes, {fleet.configurations} distinct configurations")
    print(
        "odd nodes found/written: "
        + ", ".join(f"{label} {found[label]}/{written[label]}" for label in written)
    )
    print(f"gate: {'PASS' if fleet.gate.passed else 'FAIL'}, {fleet.gate.healthy} healthy")
    print(
        f"aggregate in process: {in_process:.2f} s ({in_process / args.nodes * 1000:.3f} ms/node)"
    )
    print(f"te-doctor fleet (whole process): {whole:.2f} s, exit code {done.returncode}")
    print(done.stdout.split("\n\n")[0])


if __name__ == "__main__":
    main()
