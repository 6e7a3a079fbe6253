"""Real Python MCP (mcp 2.3) client for Stoa e2e tests.

Reads a plan as JSON on stdin: {"url", "mode": "auto"|"legacy", "token"?, "headers"?, "calls": [{"tool", "args"}]}.
Runs every call over one connection and prints a JSON list of {"text", "is_error", "json"}.
String argument values like "{{0.session_id}}" are replaced by a field of an earlier call's JSON result.
A call may instead be {"op": "list_resources" | "list_resource_templates" | "read_resource" | "list_prompts" |
"get_prompt" | "complete" | "request", "uri"?, "name"?, "arguments"?, "ref"?, "argument"?, "method"?, "params"?}: its "json" is the MCP result, or {"error": {"code", "message"}} when the server refused;
a tool result's resource_link contents are in "links".
"""
import asyncio
import json
import re
import sys

import httpx2
import mcp
from pydantic import TypeAdapter
from mcp import types
from mcp.client.streamable_http import streamable_http_client

REF = re.compile(r"^\{\{(\d+)\.(\w+)\}\}$")


def resolve(value, results):
    if isinstance(value, str):
        m = REF.match(value)
        if m:
            return results[int(m.group(1))]["json"][m.group(2)]
    return value


async def run_op(client, call, results):
    """A non-tool request (resources, prompts, completion, skills): its result as JSON, or the server's error."""
    op = call["op"]
    try:
        if op == "list_resources":
            res = await client.list_resources()
        elif op == "list_resource_templates":
            res = await client.list_resource_templates()
        elif op == "read_resource":
            res = await client.read_resource(resolve(call["uri"], results))
        elif op == "list_prompts":
            res = await client.list_prompts()
        elif op == "get_prompt":
            res = await client.get_prompt(call["name"], call.get("arguments"))
        elif op == "complete":
            ref = call["ref"]
            ref = types.PromptReference(**ref) if ref["type"] == "ref/prompt" else types.ResourceTemplateReference(**ref)
            res = await client.complete(ref, call["argument"])
        elif op == "request":
            request = types.Request[dict, str](method=call["method"], params=call.get("params", {}))
            return await client.session.send_request(request, TypeAdapter(dict))
        else:
            raise ValueError(f"unknown op {op}")
    except mcp.MCPError as err:
        return {"error": {"code": err.error.code, "message": err.error.message}}
    return res.model_dump(by_alias=True, mode="json", exclude_none=True)


async def main():
    plan = json.load(sys.stdin)
    headers = {"Authorization": "Bearer " + plan["token"]} if plan.get("token") else {}
    headers.update(plan.get("headers") or {})
    results = []
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
        transport = streamable_http_client(plan["url"], http_client=http)
        async with mcp.Client(transport, mode=plan.get("mode", "auto")) as client:
            if plan.get("list_tools"):
                tools = await client.list_tools()
                results.append({"text": "", "is_error": False, "json": {"tools": [t.name for t in tools.tools]}})
            for call in plan["calls"]:
                if "op" in call:
                    results.append({"text": "", "is_error": False, "json": await run_op(client, call, results)})
                    continue
                args = {k: resolve(v, results) for k, v in call.get("args", {}).items()}
                res = await client.call_tool(call["tool"], args)
                text = "".join(getattr(c, "text", "") for c in res.content)
                try:
                    parsed = json.loads(text)
                except ValueError:
                    parsed = None
                links = [c.model_dump(by_alias=True, mode="json", exclude_none=True) for c in res.content if c.type == "resource_link"]
                results.append({"text": text, "is_error": bool(res.is_error), "json": parsed, "links": links})
    json.dump(results, sys.stdout)


asyncio.run(main())
