"""Real Python MCP (mcp 2.3) client for Stoa e2e tests.

Reads a plan as JSON on stdin: {"url", "mode": "auto"|"legacy", "token"?, "calls": [{"tool", "args"}]}.
Runs every call over one connection and prints a JSON list of {"text", "is_error", "json"}.
String argument values like "{{0.session_id}}" are replaced by a field of an earlier call's JSON result.
"""
import asyncio
import json
import re
import sys

import httpx2
import mcp
from mcp.client.streamable_http import streamable_http_client

REF = re.compile(r"^\{\{(\d+)\.(\w+)\}\}$")


def resolve(value, results):
    if isinstance(value, str):
        m = REF.match(value)
        if m:
            return results[int(m.group(1))]["json"][m.group(2)]
    return value


async def main():
    plan = json.load(sys.stdin)
    headers = {"Authorization": "Bearer " + plan["token"]} if plan.get("token") else {}
    results = []
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
        transport = streamable_http_client(plan["url"], http_client=http)
        async with mcp.Client(transport, mode=plan.get("mode", "auto")) as client:
            if plan.get("list_tools"):
                tools = await client.list_tools()
                results.append({"text": "", "is_error": False, "json": {"tools": [t.name for t in tools.tools]}})
            for call in plan["calls"]:
                args = {k: resolve(v, results) for k, v in call.get("args", {}).items()}
                res = await client.call_tool(call["tool"], args)
                text = "".join(getattr(c, "text", "") for c in res.content)
                try:
                    parsed = json.loads(text)
                except ValueError:
                    parsed = None
                results.append({"text": text, "is_error": bool(res.is_error), "json": parsed})
    json.dump(results, sys.stdout)


asyncio.run(main())
