"""Benchmark: `recon extract` vs dlt's `rest_api` source (OffsetPaginator → Parquet).

    .venv/bin/python bench/extract.py                 # 100k intents, both tools, + 1M recon
    .venv/bin/python bench/extract.py --n 20000 --big 0   # a quick look
    .venv/bin/python bench/extract.py --repeat 3      # each no-drift run 3x, alternating

The emulator runs in its own process on loopback with 20 ms added latency per request
(`WireFaults(latency_ms=20)`), filled with `bulk_load`. Each tool runs in a fresh process
(so its peak RSS, VmHWM, is its own), against the same server, in the same run:

1. no drift: recon (concurrency 8) and dlt, each timed from the first request to the
   committed Parquet; intents/s, ratio, peak RSS, duplicates and misses against the
   server's id set (read afterwards by a clean sequential walk);
2. drift: for the first `--drift-requests` list requests of each run, every list request
   first inserts `--drift-inserts` intents at the head and moves `--drift-changes` intents
   one lifecycle step (the emulator's wire drift); then the list stands still. Duplicates
   and misses are counted against the server's final id set;
   Then recon again against pages answered from memory (one untimed run fills them; never
   under drift): the client against the network alone, since on a 2-core box the emulator
   rendering pages competes with the client for the cores. Beside it, the round trip of a
   page asked alone (latency + the emulator's own time to answer, which the network's bound
   counts as zero) and the ceiling it sets: `concurrency` pages per round trip;
3. `--big` intents (default 1M) with recon alone, for peak memory.

Needs the bench extra: `pip install 'dlt[parquet]' psutil` (`make bench` does it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from email.utils import formatdate
from pathlib import Path
from typing import Any

from _rss import peak_rss_mb  # bench/ is on sys.path: the scripts run as files

ROOT = Path(__file__).resolve().parents[1]
KEYS = "bench-key-a,bench-key-b"


# ----------------------------------------------------------------------------- server


def serve(n: int, port: int, latency_ms: int, seed: int) -> None:
    """The emulator with `n` intents, on loopback; drift only inside a request budget."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from recon.sandbox.asgi import create_app
    from recon.sandbox.emulator import Emulator
    from recon.sandbox.serving import serve_forever
    from recon.sandbox.wire_faults import WireFaults

    emu = Emulator(seed=seed, keys=KEYS.split(","))
    emu.bulk_load(n, days=30)
    budget = {"left": 0, "inserts": 0, "changes": 0}

    async def bench_drift(request: Request) -> JSONResponse:
        body = await request.json()
        budget.update(left=body["requests"], inserts=body["inserts"], changes=body["changes"])
        return JSONResponse(budget)

    async def bench_ids(request: Request) -> JSONResponse:
        # The truth, straight from the store (intents are never deleted): no latency, no walk.
        with emu._lock:
            store = emu._store(None)
            ids = [store.intent_id(seq) for seq in range(store.count())]
        return JSONResponse(ids)

    app = create_app(
        emu,
        faults=WireFaults(latency_ms=latency_ms),
        extra_routes=[
            Route("/_bench/drift", bench_drift, methods=["POST"]),
            Route("/_bench/ids", bench_ids, methods=["GET"]),
        ],
    )
    inner = app.router

    async def counting(scope: Any, receive: Any, send: Any) -> None:
        # Drift applies to a fixed number of list requests, whatever the tool's speed.
        if scope["type"] == "http" and scope["path"] == "/v2/intents":
            f = app.state.faults
            if budget["left"] > 0:
                budget["left"] -= 1
                f.drift_inserts_per_list = budget["inserts"]
                f.drift_status_changes_per_list = budget["changes"]
            else:
                f.drift_inserts_per_list = 0
                f.drift_status_changes_per_list = 0
        await inner(scope, receive, send)

    # Pages answered from memory (only while `cache["on"]`, never under drift), so a run
    # measures the client against the network alone: on this 2-core box the emulator
    # rendering pages shares the cores with the client it serves.
    cache: dict[str, Any] = {"on": False, "pages": {}}

    async def bench_cache(request: Request) -> JSONResponse:
        cache.update(on=bool((await request.json())["on"]), pages={})
        return JSONResponse({"on": cache["on"]})

    async def cached(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/_bench/cache":
            await Route("/_bench/cache", bench_cache, methods=["POST"])(scope, receive, send)
            return
        listing = scope["type"] == "http" and scope["path"] == "/v2/intents"
        if not (listing and cache["on"] and budget["left"] == 0):
            await counting(scope, receive, send)
            return
        key = (scope["query_string"], dict(scope["headers"]).get(b"x-api-key"))
        hit = cache["pages"].get(key)
        if hit is None:
            sent: list[dict[str, Any]] = []

            async def keep(message: dict[str, Any]) -> None:
                sent.append(message)
                await send(message)

            await counting(scope, receive, keep)
            if sent and sent[0].get("status") == 200:
                cache["pages"][key] = sent
            return
        await asyncio.sleep(latency_ms / 1000)
        start, *rest = hit
        date = formatdate(usegmt=True).encode()
        headers = [(k, date if k == b"date" else v) for k, v in start["headers"]]
        await send({**start, "headers": headers})
        for message in rest:
            await send(message)

    app.router = cached  # type: ignore[assignment]
    print("READY", flush=True)
    serve_forever(app, "127.0.0.1", port)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, n: int, latency_ms: int, seed: int = 1):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--serve",
                str(n),
                "--port",
                str(self.port),
                "--latency-ms",
                str(latency_ms),
                "--seed",
                str(seed),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        from recon.sandbox.emulator import Emulator

        self.key = Emulator(seed=seed, keys=KEYS.split(",")).instances[0].api_key
        import httpx

        deadline = time.monotonic() + 600
        while True:
            try:
                r = httpx.get(self.url + "/v2/intents?limit=1", headers={"X-API-Key": self.key})
                if r.status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("bench server did not start")
            time.sleep(0.2)

    def drift(self, requests: int, inserts: int, changes: int) -> None:
        import httpx

        httpx.post(
            self.url + "/_bench/drift",
            json={"requests": requests, "inserts": inserts, "changes": changes},
        ).raise_for_status()

    def cache(self, on: bool) -> None:
        """Answer list pages from memory (filled by the next run) or not; clears it."""
        import httpx

        httpx.post(self.url + "/_bench/cache", json={"on": on}).raise_for_status()

    def round_trip(self, pages: int = 60) -> float:
        """The median time of one list page asked alone (limit 100, one kept-alive
        connection, the stdlib's HTTP client): the latency plus the emulator's own time to
        answer, which the network's bound leaves out."""
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        times = []
        try:
            for page in range(pages):
                started = time.perf_counter()
                conn.request(
                    "GET",
                    f"/v2/intents?limit=100&offset={page * 100}",
                    headers={"X-API-Key": self.key},
                )
                response = conn.getresponse()
                response.read()
                times.append(time.perf_counter() - started)
                if response.status != 200:
                    raise RuntimeError(f"bench server answered {response.status}")
        finally:
            conn.close()
        return statistics.median(times)

    def ids(self) -> set[str]:
        """The server's id set now (read from the store, after any drift has stopped)."""
        import httpx

        return set(httpx.get(self.url + "/_bench/ids", timeout=120).json())

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


# ----------------------------------------------------------------------------- tools


def run_recon(url: str, key: str, out: str, concurrency: int) -> dict[str, Any]:
    from recon.errors import PaginationError
    from recon.extraction import extract

    t0 = time.perf_counter()
    try:
        result = extract(out, base_url=url, api_key=key, concurrency=concurrency, quiet=True)
        manifest = result.manifest
        part = result.path / "part-00000.parquet"
    except PaginationError as exc:
        res = getattr(exc, "result", None)
        if res is None:
            raise
        manifest = res.manifest
        part = res.path / "part-00000.parquet"
    elapsed = time.perf_counter() - t0
    return {"elapsed": elapsed, "files": [str(part)], "manifest": manifest}


def run_dlt(url: str, key: str, out: str) -> dict[str, Any]:
    os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
    import dlt
    from dlt.sources.helpers.rest_client.paginators import OffsetPaginator
    from dlt.sources.rest_api import rest_api_source

    source = rest_api_source(
        {
            "client": {"base_url": url, "headers": {"X-API-Key": key}},
            "resources": [
                {
                    "name": "intents",
                    "endpoint": {
                        "path": "v2/intents",
                        "data_selector": "intents",
                        "paginator": OffsetPaginator(
                            limit=100,
                            offset_param="offset",
                            limit_param="limit",
                            total_path="total",
                        ),
                    },
                }
            ],
        }
    )
    pipeline = dlt.pipeline(
        pipeline_name="bench_intents",
        destination=dlt.destinations.filesystem(bucket_url=str(Path(out) / "lake")),
        dataset_name="api",
        pipelines_dir=str(Path(out) / "pipelines"),
    )
    t0 = time.perf_counter()
    pipeline.run(source, loader_file_format="parquet")
    elapsed = time.perf_counter() - t0
    files = sorted(str(p) for p in (Path(out) / "lake").rglob("*.parquet") if "intents" in str(p))
    return {"elapsed": elapsed, "files": files}


def child(tool: str, url: str, key: str, out: str, concurrency: int) -> None:
    import resource

    # Each tool's modules are imported before the clock starts: CPU per intent is the
    # work's, not a fixed start-up cost spread over N (the same rule for both tools). That
    # includes pandas, which pyarrow imports on the first array built from Python objects
    # (~0.1 s of CPU, 1 µs per intent at 100k, spent once per process).
    import pandas  # noqa: F401

    if tool == "recon":
        import recon.extraction.snapshot  # noqa: F401
    else:
        os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
        import dlt  # noqa: F401
        from dlt.sources.rest_api import rest_api_source  # noqa: F401
    before = resource.getrusage(resource.RUSAGE_SELF)
    res = run_recon(url, key, out, concurrency) if tool == "recon" else run_dlt(url, key, out)
    after = resource.getrusage(resource.RUSAGE_SELF)
    # CPU time of the work itself: a figure that does not depend on how busy the machine is
    res["cpu_seconds"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    res["peak_rss_mb"] = peak_rss_mb()
    print("RESULT " + json.dumps(res, default=str), flush=True)


def measure(tool: str, server: Server, concurrency: int = 8) -> dict[str, Any]:
    """Run one tool in a fresh process; return its timing, peak RSS and the ids it wrote."""
    import pyarrow.parquet as pq

    out = tempfile.mkdtemp(prefix=f"bench-{tool}-")
    proc = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--child",
            tool,
            "--url",
            server.url,
            "--key",
            server.key,
            "--out",
            out,
            "--concurrency",
            str(concurrency),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, RUNTIME__DLTHUB_TELEMETRY="false"),
    )
    stdout, _ = proc.communicate()
    if proc.returncode:
        raise RuntimeError(f"{tool} failed ({proc.returncode}): {stdout[-2000:]}")
    line = next(x for x in stdout.splitlines() if x.startswith("RESULT "))
    res: dict[str, Any] = json.loads(line[len("RESULT ") :])
    ids: list[str] = []
    for f in res["files"]:
        ids.extend(pq.read_table(f, columns=["id"]).column("id").to_pylist())
    res["ids"] = ids
    return res


def score(res: dict[str, Any], truth: set[str]) -> dict[str, Any]:
    ids = res["ids"]
    unique = set(ids)
    return {
        "rows": len(ids),
        "intents_per_s": len(unique) / res["elapsed"],
        "seconds": res["elapsed"],
        "peak_rss_mb": res["peak_rss_mb"],
        "cpu_us_per_intent": res["cpu_seconds"] / max(len(unique), 1) * 1e6,
        "duplicates": len(ids) - len(unique),
        "misses": len(truth - unique),
        "extras": len(unique - truth),
    }


def fmt(name: str, s: dict[str, Any]) -> str:
    return (
        f"  {name:<6} {s['rows']:>9,} rows {s['seconds']:7.1f} s {s['intents_per_s']:>9,.0f}/s "
        f"CPU {s['cpu_us_per_intent']:5.0f} µs/intent  peak RSS {s['peak_rss_mb']:5.0f} MB  dup {s['duplicates']:>5}  "
        f"misses {s['misses']:>5}  extras {s['extras']:>3}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000, help="intents for the comparison")
    ap.add_argument("--big", type=int, default=1_000_000, help="intents for recon alone (0: skip)")
    ap.add_argument("--latency-ms", type=int, default=20)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--drift-requests", type=int, default=300)
    ap.add_argument("--drift-inserts", type=int, default=2)
    ap.add_argument("--drift-changes", type=int, default=5)
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="no-drift runs of each tool (alternating) and 1M runs; the best is compared",
    )
    ap.add_argument("--json", help="also write the figures to this file")
    # internal modes
    ap.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--child", choices=["recon", "dlt"], help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--key", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve is not None:
        serve(args.serve, args.port, args.latency_ms, args.seed)
        return
    if args.child:
        child(args.child, args.url, args.key, args.out, args.concurrency)
        return

    figures: dict[str, Any] = {"n": args.n, "latency_ms": args.latency_ms}
    print(
        f"emulator: {args.n:,} intents, {args.latency_ms} ms added latency, loopback; "
        f"recon concurrency {args.concurrency}; page size 100 for both",
        flush=True,
    )
    server = Server(args.n, args.latency_ms)
    try:
        truth = server.ids()
        print("no drift:", flush=True)
        runs: dict[str, list[dict[str, Any]]] = {"recon": [], "dlt": []}
        for _ in range(args.repeat):  # alternating, so both see the same machine load
            r = score(measure("recon", server, args.concurrency), truth)
            print(fmt("recon", r), flush=True)
            runs["recon"].append(r)
            d = score(measure("dlt", server), truth)
            print(fmt("dlt", d), flush=True)
            runs["dlt"].append(d)
        r, d = (max(runs[t], key=lambda x: x["intents_per_s"]) for t in ("recon", "dlt"))
        ratio = r["intents_per_s"] / d["intents_per_s"]
        if args.repeat > 1:
            med = {t: statistics.median(x["intents_per_s"] for x in runs[t]) for t in runs}
            print(
                f"  best of {args.repeat}: recon {r['intents_per_s']:,.0f}/s, "
                f"dlt {d['intents_per_s']:,.0f}/s; median: recon {med['recon']:,.0f}/s, "
                f"dlt {med['dlt']:,.0f}/s, ratio {med['recon'] / med['dlt']:.1f}x",
                flush=True,
            )
        print(f"  recon / dlt throughput: {ratio:.1f}x", flush=True)
        # The network's bound: `concurrency` pages of 100 in flight, one round trip each.
        bound = args.concurrency * 100 / (args.latency_ms / 1000)
        # the emulator keeps each intent's JSON until it changes: the first walk after the
        # bulk load renders every intent on the shared cores, later walks mostly do not
        cold = runs["recon"][0]["intents_per_s"]
        print(
            f"  recon's first walk (the emulator renders every intent): {cold:,.0f} intents/s, "
            f"{cold / bound:.0%} of the bound",
            flush=True,
        )
        figures["no_drift"] = {"recon": r, "dlt": d, "ratio": ratio, "runs": runs}
        figures["bound"] = bound

        # The same walk against pages answered from memory (one untimed run fills them): the
        # client's own ceiling, without the emulator rendering pages on the shared cores.
        server.cache(True)
        score(measure("recon", server, args.concurrency), truth)
        c = score(measure("recon", server, args.concurrency), truth)
        # what the emulator itself allows: a page's round trip is the latency plus the time
        # the emulator takes to answer it, which the network's bound counts as zero
        trip = server.round_trip()
        server.cache(False)
        ceiling = args.concurrency * 100 / trip
        print(fmt("recon", c) + "  (pages from memory)", flush=True)
        print(
            f"  recon against pages from memory: {c['intents_per_s']:,.0f} intents/s, "
            f"{c['intents_per_s'] / bound:.0%} of the bound {bound:,.0f}/s",
            flush=True,
        )
        print(
            f"  a page asked alone takes {trip * 1e3:.1f} ms (latency {args.latency_ms} ms): "
            f"the emulator answers at most {ceiling:,.0f} intents/s at concurrency "
            f"{args.concurrency}; recon from memory reaches {c['intents_per_s'] / ceiling:.0%} "
            "of that",
            flush=True,
        )
        figures["no_drift_cached"] = {"recon": c, "round_trip_s": trip, "ceiling": ceiling}

        print(
            f"drift (first {args.drift_requests} list requests of each run: "
            f"+{args.drift_inserts} inserts at the head, {args.drift_changes} status moves):",
            flush=True,
        )
        server.drift(args.drift_requests, args.drift_inserts, args.drift_changes)
        rr = measure("recon", server, args.concurrency)
        r = score(rr, server.ids())
        r["passes"] = rr["manifest"]["passes"]
        r["consistent"] = rr["manifest"]["consistent"]
        print(fmt("recon", r) + f"  passes {r['passes']} consistent {r['consistent']}", flush=True)
        server.drift(args.drift_requests, args.drift_inserts, args.drift_changes)
        d = score(measure("dlt", server), server.ids())
        print(fmt("dlt", d), flush=True)
        figures["drift"] = {"recon": r, "dlt": d}
    finally:
        server.stop()

    if args.big:
        print(f"memory: recon alone, {args.big:,} intents", flush=True)
        server = Server(args.big, args.latency_ms)
        try:
            truth = server.ids()
            bigs = []
            for _ in range(args.repeat):
                b = score(measure("recon", server, args.concurrency), truth)
                print(fmt("recon", b), flush=True)
                bigs.append(b)
            worst = max(x["peak_rss_mb"] for x in bigs)
            print(f"  peak RSS, worst of {len(bigs)}: {worst:.0f} MB", flush=True)
            figures["big"] = {"recon": bigs[-1], "runs": bigs, "worst_peak_rss_mb": worst}
        finally:
            server.stop()
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    r, d = figures["no_drift"]["recon"], figures["no_drift"]["dlt"]
    x, z, y = r["intents_per_s"], d["intents_per_s"], figures["bound"]
    print(
        f"extract {args.n}: recon {x:,.0f} intents/s, {r['cpu_us_per_intent']:.1f} µs CPU/intent, "
        f"bound {y:,.0f} intents/s ({x / y:.0%}), dlt {z:,.0f} intents/s (ratio {x / z:.1f})",
        flush=True,
    )


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
