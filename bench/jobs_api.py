"""The jobs API under load, on the local cluster, through the hub's proxy as a user would call it.

1. POST /services/portal/api/jobs at a steady 20 submissions per second for 30 s (open loop:
   each request leaves on schedule whether or not earlier ones have answered), each a real
   sbatch as alice; prints p50/p95 of POST-to-Slurm-job-id and the error count.
2. A burst: 50 submissions at once, then their 50 cancels at once, while the profiles are read
   (GET /services/portal/api/profiles, what the hub's spawn page asks) every 50 ms; prints the
   reads' p50/p95 during the burst and on their own.
3. With 1,000 jobs stored, GET /services/portal/api/jobs 300 times; prints p50/p99.

Run after `make demo` or `make test` has set up the cluster:

    /opt/gpuportal/venv/bin/python bench/jobs_api.py [--rate 20] [--seconds 30] [--burst 50]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hubproc import Hub

JOB = {
    "name": "bench",
    "launcher": "srun",
    "nodes": 1,
    "gpus_per_node": 1,
    "runtime": "00:01:00",
    "script": "/home/alice/bench.sh",
}


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


async def submit_load(url: str, token: str, rate: float, seconds: float) -> tuple[list[float], int]:
    headers = {"Authorization": f"token {token}"}
    latencies: list[float] = []
    errors = 0
    limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:

        async def one(index: int, due: float) -> None:
            nonlocal errors
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            begun = time.monotonic()
            response = await client.post(
                url, headers={**headers, "Idempotency-Key": f"bench-{begun}-{index}"}, json=JOB
            )
            if response.status_code == 201 and response.json().get("slurm_job_id"):
                latencies.append(time.monotonic() - begun)
            else:
                errors += 1
                if errors <= 3:
                    print(f"  error {response.status_code}: {response.text[:200]}")

        start = time.monotonic() + 0.5
        total = int(rate * seconds)
        await asyncio.gather(*(one(i, start + i / rate) for i in range(total)))
    return latencies, errors


async def burst_load(
    hub_url: str, token: str, burst: int
) -> tuple[list[float], list[float], int, list[str]]:
    """The profile reads' times on their own, and during a burst of submits and cancels; how
    many of the burst's requests failed; and the reads that failed, as their answers."""
    headers = {"Authorization": f"token {token}"}
    jobs_url = f"{hub_url}/services/portal/api/jobs"
    limits = httpx.Limits(max_connections=burst + 10, max_keepalive_connections=burst + 10)
    async with httpx.AsyncClient(timeout=120, limits=limits, headers=headers) as client:
        read_failures: list[str] = []

        async def read() -> float:
            begun = time.monotonic()
            try:
                response = await client.get(f"{hub_url}/services/portal/api/profiles")
                if response.status_code != 200:
                    read_failures.append(f"HTTP {response.status_code}")
            except httpx.HTTPError as error:
                read_failures.append(type(error).__name__)
            return time.monotonic() - begun

        quiet = [await read() for _ in range(40)]
        failed = 0

        async def submit(index: int) -> int | None:
            nonlocal failed
            job = {**JOB, "name": f"burst-{index}"}
            try:
                response = await client.post(jobs_url, json=job)
            except httpx.HTTPError:
                response = None
            if response is None or response.status_code != 201:
                failed += 1
                return None
            return int(response.json()["id"])

        async def cancel(job: int) -> None:
            nonlocal failed
            try:
                failed += (await client.delete(f"{jobs_url}/{job}")).status_code != 202
            except httpx.HTTPError:
                failed += 1

        async def burst_of_both() -> None:
            made = await asyncio.gather(*(submit(i) for i in range(burst)))
            await asyncio.gather(*(cancel(job) for job in made if job is not None))

        during: list[float] = []
        running = asyncio.create_task(burst_of_both())
        while not running.done():
            during.append(await read())
            await asyncio.sleep(0.05)
        await running
    return quiet, during, failed, read_failures


def store_jobs(database: Path, count: int) -> None:
    """Finished jobs of alice, straight into the portal's table (what months of use leave)."""
    now = datetime.now(UTC).isoformat(sep=" ")
    with sqlite3.connect(database) as db:
        db.executemany(
            "INSERT INTO jobs (user, name, launcher, request, script, output, slurm_job_id, "
            "state, reason, nodes, exit_code, submitted_at, started_at, ended_at, updated_at) "
            "VALUES ('alice', ?, 'torchrun', '{}', '#!/bin/bash', '/dev/null', ?, 'COMPLETED', "
            "'', 'gpu[01-02]', 0, ?, '', '', ?)",
            [(f"old-{i}", str(900000 + i), now, now) for i in range(count)],
        )


async def list_load(url: str, token: str, requests: int) -> list[float]:
    headers = {"Authorization": f"token {token}"}
    times = []
    async with httpx.AsyncClient(timeout=30) as client:
        await client.get(url, headers=headers)  # warm the token cache
        for _ in range(requests):
            begun = time.monotonic()
            response = await client.get(url, headers=headers)
            response.raise_for_status()
            times.append(time.monotonic() - begun)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--stored", type=int, default=1000)
    parser.add_argument("--burst", type=int, default=50)
    args = parser.parse_args()
    subprocess.run(["scancel", "-u", "alice"], check=False)
    subprocess.run(
        ["sudo", "-u", "alice", "sh", "-c", "printf '#!/bin/sh\\ntrue\\n' > ~/bench.sh; "
         "chmod +x ~/bench.sh"],
        check=True,
    )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-jobs-") as state:
        hub = Hub(Path(state), 8500)
        hub.start()
        try:
            session = hub.login("alice")
            token = hub.api(session, "POST", "/users/alice/tokens", json={"note": "bench"}).json()[
                "token"
            ]
            jobs_url = f"{hub.url}/services/portal/api/jobs"
            latencies, errors = asyncio.run(submit_load(jobs_url, token, args.rate, args.seconds))
            subprocess.run(["scancel", "-u", "alice"], check=False)
            quiet, during, burst_failed, read_failures = asyncio.run(
                burst_load(hub.url, token, args.burst)
            )
            subprocess.run(["scancel", "-u", "alice"], check=False)
            store_jobs(Path(state) / "portal.db", args.stored)
            list_times = asyncio.run(list_load(jobs_url, token, 300))
        finally:
            hub.stop()
            subprocess.run(["scancel", "-u", "alice"], check=False)
    sent = int(args.rate * args.seconds)
    print(f"POST /api/jobs at {args.rate:g}/s for {args.seconds:g} s ({sent} submissions):")
    if latencies:
        print(
            f"  POST-to-Slurm-job-id  p50 {statistics.median(latencies) * 1000:.0f} ms   "
            f"p95 {percentile(latencies, 95) * 1000:.0f} ms   max {max(latencies) * 1000:.0f} ms"
        )
    print(f"  errors: {errors}")
    print(f"GET /api/profiles during {args.burst} submits and then {args.burst} cancels at once:")
    for what, times in (("on its own", quiet), ("during the burst", during)):
        print(
            f"  {what:<17} p50 {statistics.median(times) * 1000:.0f} ms   "
            f"p95 {percentile(times, 95) * 1000:.0f} ms   ({len(times)} reads)"
        )
    print(f"  the burst's failed requests: {burst_failed}")
    print(f"  failed reads: {len(read_failures)} {sorted(set(read_failures))}")
    print(f"GET /api/jobs with {args.stored:,} stored jobs (300 requests):")
    print(
        f"  p50 {statistics.median(list_times) * 1000:.1f} ms   "
        f"p99 {percentile(list_times, 99) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
