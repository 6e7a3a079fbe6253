"""execute vs a no-op tool through the real Python `mcp` 2.3 client (bench/execute-roundtrip.ts runs it).

Reads {"url", "mode": "auto"|"legacy", "session_id", "warmup", "samples"} as JSON on stdin; runs the two calls
interleaved (order alternating) over one connection and prints {"execute": [ms, ...], "noop": [ms, ...]}.
"""
import asyncio
import json
import sys
import time

import httpx2
import mcp
from mcp.client.streamable_http import streamable_http_client


async def main():
    plan = json.load(sys.stdin)
    sid = plan["session_id"]
    times = {"execute": [], "noop": []}

    async with httpx2.AsyncClient(timeout=60) as http:
        async with mcp.Client(streamable_http_client(plan["url"], http_client=http), mode=plan["mode"]) as client:
            async def execute():
                r = await client.call_tool("execute_demo_code", {"code": "x+1", "execution_session_id": sid})
                body = json.loads(r.content[0].text)
                return body.get("stdout") == "2\n" and body.get("session_id") == sid

            async def noop():
                r = await client.call_tool("demo_list_sessions", {"summary_only": True})
                return "count" in json.loads(r.content[0].text)

            calls = [("execute", execute), ("noop", noop)]
            for i in range(plan["warmup"] + plan["samples"]):
                for name, call in calls if i % 2 == 0 else calls[::-1]:
                    t0 = time.perf_counter()
                    if not await call():
                        raise SystemExit("%s: unexpected result in round %d" % (name, i))
                    if i >= plan["warmup"]:
                        times[name].append((time.perf_counter() - t0) * 1000)
    json.dump(times, sys.stdout)


asyncio.run(main())
