"""``python -m benchmarks.batch_spark [--quick]``: ``ssewire.spark.parse`` on a local Spark against ``ssewire batch``,
on the archive ``python -m benchmarks.batch`` wrote, on this machine.

Both read the archive's Parquet file and write Parquet rows (``source`` and the result columns): Spark in
``local[N]`` (N = the cores here) through :func:`ssewire.spark.parse`, the CLI with ``--jobs N``. Spark's session is
started first and timed apart; its first job (Python workers starting) is reported apart from the medians of the
later ones. The CLI is timed as a whole command, interpreter start included. Needs the ``spark`` extra and Java.
Prints the figures and adds them to ``benchmarks/results/batch[-quick].json`` under ``"spark"``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from .batch import FULL_STREAMS, QUICK_STREAMS, RESULTS, ROOT, build, cores


def _timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def spark_vs_cli(parquet: Path, repeats: int, workdir: Path) -> dict[str, Any]:
    """Medians of ``repeats`` runs of each, after one warm-up run of each."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import ssewire.batch.spark

    n = cores()
    # the CLI first: once started, Spark's JVM lives as long as this process
    cli = [sys.executable, "-m", "ssewire", "batch", str(parquet), "--jobs", str(n), "--quiet"]
    cli_times = [_timed([*cli, "--out", str(workdir / f"cli-{i}.parquet")]) for i in range(repeats + 1)]
    start = time.perf_counter()
    spark = (
        SparkSession.builder.master(f"local[{n}]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.shuffle.partitions", str(n))
        .config("spark.local.dir", str(workdir / "spark-tmp"))
        .getOrCreate()
    )
    session_s = time.perf_counter() - start
    spark_times: list[float] = []
    try:
        for i in range(repeats + 1):
            out = workdir / f"spark-{i}"
            start = time.perf_counter()
            archive = spark.read.parquet(str(parquet)).select("source", "body")
            ssewire.batch.spark.parse(archive).drop("body").write.parquet(str(out))
            spark_times.append(time.perf_counter() - start)
            shutil.rmtree(out, ignore_errors=True)
    finally:
        spark.stop()
    spark_s, cli_s = statistics.median(spark_times[1:]), statistics.median(cli_times[1:])
    return {
        "cores": n,
        "spark_session_start_s": session_s,
        "spark_first_job_s": spark_times[0],
        "spark_job_s": spark_s,
        "cli_s": cli_s,
        "cli_over_spark_speed": spark_s / cli_s,
    }


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.batch_spark", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="the quick archive (2,000 bodies)")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    archive = build(QUICK_STREAMS if args.quick else FULL_STREAMS, log=lambda message: None)
    with tempfile.TemporaryDirectory(prefix="ssewire-spark-") as tmp:
        figures = spark_vs_cli(archive.parquet, args.repeats, Path(tmp))
    figures["archive"] = {"streams": archive.streams, "bytes": archive.bytes}
    print(json.dumps(figures, indent=2))
    print(
        f"{archive.streams:,} bodies, {archive.bytes / 1e6:,.0f} MB, {figures['cores']} cores: Spark local "
        f"{figures['spark_job_s']:.1f} s a job (first {figures['spark_first_job_s']:.1f} s, session start "
        f"{figures['spark_session_start_s']:.1f} s) vs ssewire batch {figures['cli_s']:.1f} s: "
        f"{figures['cli_over_spark_speed']:.1f}x"
    )
    path = RESULTS / f"batch{'-quick' if args.quick else ''}.json"
    if path.exists():
        doc = json.loads(path.read_text())
        doc["spark"] = figures
        path.write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
