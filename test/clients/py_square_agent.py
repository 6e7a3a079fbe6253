"""One coordination-square agent for Stoa e2e tests: a real Python MCP (mcp 2.3) client.

Reads a plan as JSON on stdin:
  {"url" | "stdio": {"command", "args", "env"}, "mode": "auto"|"legacy", "token"?, "name", "channel",
   "posts": N, "expect": total messages in the channel before stopping, "calls"?: [{"tool", "args"}]}
Registers as `name`, posts N messages "<name>:<i>", then waits with chat_await_update (re-reading the channel)
until `expect` messages are there. Prints JSON {"agent_id", "awaits", "messages": [[seq, content], ...],
"calls": [{"text", "is_error", "json"}]} — `calls` (run after registering, before posting) let a test drive any tool.
"""
import asyncio
import json
import sys

import httpx2
import mcp
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def parse(res):
    text = "".join(getattr(c, "text", "") for c in res.content)
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    return {"text": text, "is_error": bool(res.is_error), "json": parsed}


async def run(client, plan):
    async def call(tool, **args):
        out = parse(await client.call_tool(tool, args))
        if out["is_error"]:
            raise RuntimeError(f"{tool} failed: {out['text']}")
        return out["json"]

    agent_id = (await call("register", name=plan["name"], role="tester"))["agent_id"]
    extra = []
    for c in plan.get("calls", []):
        extra.append(parse(await client.call_tool(c["tool"], c.get("args", {}))))
    channel = plan.get("channel", "#load")
    for i in range(plan.get("posts", 0)):
        await call("chat_post_message", channel=channel, content=f"{plan['name']}:{i}")
    awaits = 0
    expect = plan.get("expect", 0)
    got = (await call("chat_read_messages", channel=channel, limit=1000, order="asc"))["messages"]
    while len(got) < expect:
        # Wait for the rest at once: with since (inclusive), messages already there count too, so none posted
        # between the read and the wait is missed.
        awaits += 1
        args = {"channel": channel, "nmsg": expect - len(got), "timeout": 30}
        if got:
            since = got[-1]["created_at"]
            args["since"] = since
            args["nmsg"] += sum(1 for m in got if m["created_at"] == since)
        await call("chat_await_update", **args)
        got = (await call("chat_read_messages", channel=channel, limit=1000, order="asc"))["messages"]
    return {"agent_id": agent_id, "awaits": awaits, "messages": [[m["seq"], m["content"]] for m in got], "calls": extra}


async def main():
    plan = json.load(sys.stdin)
    mode = plan.get("mode", "auto")
    if "stdio" in plan:
        s = plan["stdio"]
        params = StdioServerParameters(command=s["command"], args=s["args"], env=s.get("env"))
        async with mcp.Client(params, mode=mode) as client:
            result = await run(client, plan)
    else:
        headers = {"Authorization": "Bearer " + plan["token"]} if plan.get("token") else {}
        async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
            transport = streamable_http_client(plan["url"], http_client=http)
            async with mcp.Client(transport, mode=mode) as client:
                result = await run(client, plan)
    json.dump(result, sys.stdout)


asyncio.run(main())
