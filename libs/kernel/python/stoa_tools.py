"""Tool proxies for Stoa kernels (stdlib only, Python >= 3.8).

Each domain tool from the server's manifest becomes a function in the kernel namespace with the
manifest's signature and docstring. Calling it lazily imports the real implementation, times the call
and records a trace entry for the execution that made it.
"""
import fnmatch
import importlib
import inspect
import json
import time

MAX_TRACE_JSON = 4096
BUILTIN_TYPES = {"str": str, "int": int, "float": float, "bool": bool, "dict": dict, "list": list}


MAX_RECORDS = 100
SCALARS = (int, float, bool, type(None))


class Trace(object):
    """Tool-call records of one execution (first MAX_RECORDS kept, the rest counted per tool);
    non-JSON or large values become stable refs <Type@N>."""

    def __init__(self):
        self.records = []
        self.dropped = {}
        self._refs = {}
        self._next = 1

    def add(self, record):
        if len(self.records) < MAX_RECORDS:
            self.records.append(record)
        else:
            name = record["tool_name"]
            self.dropped[name] = self.dropped.get(name, 0) + 1

    @property
    def full(self):
        return len(self.records) >= MAX_RECORDS

    def ref(self, value):
        key = id(value)
        if key not in self._refs:
            self._refs[key] = (value, "<%s@%d>" % (type(value).__name__, self._next))
            self._next += 1
        return self._refs[key][1]

    def safe(self, value):
        if isinstance(value, SCALARS) or (isinstance(value, str) and len(value) <= 256):
            return value
        try:
            if len(json.dumps(value)) > MAX_TRACE_JSON:
                return self.ref(value)  # keep traces small: big values are named, not copied
            return value
        except (TypeError, ValueError, OverflowError):
            if isinstance(value, (list, tuple)):
                return [self.safe(v) for v in value]
            if isinstance(value, dict) and all(isinstance(k, str) for k in value):
                return dict((k, self.safe(v)) for k, v in value.items())
            return self.ref(value)


def _annotation(type_name):
    return BUILTIN_TYPES.get(type_name, type_name)


def _signature(tool):
    params = []
    for p in tool["parameters"]:
        if p.get("required"):
            params.append(inspect.Parameter(p["name"], inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=_annotation(p["type"])))
    for p in tool["parameters"]:
        if not p.get("required"):
            params.append(inspect.Parameter(p["name"], inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                            default=p.get("default"), annotation=_annotation(p["type"])))
    returns = tool.get("returns") or []
    ret = inspect.Signature.empty
    if len(returns) == 1 and returns[0]["type"] != "dict":
        ret = _annotation(returns[0]["type"])
    elif returns:
        ret = dict
    return inspect.Signature(params, return_annotation=ret)


def _docstring(tool):
    lines = [tool["description"]]
    if tool["parameters"]:
        lines += ["", "Args:"]
        for p in tool["parameters"]:
            lines.append("    %s (%s): %s" % (p["name"], p["type"], p.get("description", "")))
    returns = tool.get("returns") or []
    if len(returns) == 1 and returns[0]["type"] != "dict":
        lines += ["", "Returns:", "    %s: %s" % (returns[0]["type"], returns[0].get("description", ""))]
    elif returns:
        lines += ["", "Returns:", "    dict with keys:"]
        for r in returns:
            lines.append("        %s (%s): %s" % (r["name"], r["type"], r.get("description", "")))
    return "\n".join(lines)


def _import_error(tool, exc):
    module = tool["module"]
    return ImportError(
        "Could not import tool '%s' from '%s'. Expected: function '%s' in module '%s.py'. "
        "Hint: set module or module_override on the ToolDefinition to use a custom path. (%s: %s)"
        % (tool["name"], module, tool["name"], module.replace(".", "/"), type(exc).__name__, exc))


def make_proxy(tool, runtime):
    name = tool["name"]
    signature = _signature(tool)
    names = list(signature.parameters)
    cache = {}

    def proxy(*args, **kwargs):
        impl = cache.get("impl")
        if impl is None:
            try:
                impl = getattr(importlib.import_module(tool["module"]), name)
            except (ImportError, AttributeError) as exc:
                raise _import_error(tool, exc)
            cache["impl"] = impl
        if runtime.has_policy:
            denied = runtime.denied(name)
            if denied:
                raise PermissionError(denied)
        trace = runtime.trace
        if trace.full:  # past the record cap: run untraced, just count the call
            trace.add({"tool_name": name})
            return impl(*args, **kwargs)
        snapshot = _snapshot(args, kwargs, trace)
        started = time.perf_counter()
        record = {"tool_name": name, "args": snapshot, "timestamp": time.time()}
        try:
            result = impl(*args, **kwargs)
        except BaseException as exc:
            record.update(result={}, success=False, error="%s: %s" % (type(exc).__name__, exc),
                          duration_ms=round((time.perf_counter() - started) * 1000, 3))
            trace.add(record)
            raise
        record.update(result=trace.safe(result), success=True, error=None,
                      duration_ms=round((time.perf_counter() - started) * 1000, 3))
        trace.add(record)
        return result

    def _snapshot(call_args, call_kwargs, trace):
        if len(call_args) <= len(names) and not (set(call_kwargs) - set(names)):
            out = dict((k, trace.safe(v)) for k, v in zip(names, call_args))
            for k, v in call_kwargs.items():
                out[k] = trace.safe(v)
            return out
        try:
            bound = signature.bind(*call_args, **call_kwargs)
            return dict((k, trace.safe(v)) for k, v in bound.arguments.items())
        except TypeError:
            return {"args": trace.safe(list(call_args)), "kwargs": trace.safe(call_kwargs)}

    proxy.__name__ = name
    proxy.__qualname__ = name
    proxy.__doc__ = _docstring(tool)
    proxy.__signature__ = signature
    proxy.__module__ = "stoa_tools"
    return proxy


def _render_signature(tool):
    parts = []
    for p in [p for p in tool["parameters"] if p.get("required")] + [p for p in tool["parameters"] if not p.get("required")]:
        if p.get("required"):
            parts.append("%s: %s" % (p["name"], p["type"]))
        else:
            parts.append("%s: %s = %r" % (p["name"], p["type"], p.get("default")))
    returns = tool.get("returns") or []
    ret = returns[0]["type"] if len(returns) == 1 and returns[0]["type"] != "dict" else ("dict" if returns else "None")
    return "%s(%s) -> %s" % (tool["name"], ", ".join(parts), ret)


class Runtime(object):
    """Per-kernel tool state: the active execution's trace and the function policy."""

    def __init__(self, tools):
        self.tools = tools
        self.trace = Trace()
        self.allowed = None
        self.blocked = ()
        self.has_policy = False

    def begin(self, policy=None):
        self.trace = Trace()
        policy = policy or {}
        self.allowed = policy.get("allowed")
        self.blocked = policy.get("blocked") or ()
        self.has_policy = self.allowed is not None or bool(self.blocked)

    def end(self):
        """Drops the finished execution's trace (and the objects its refs kept alive)."""
        self.trace = Trace()

    def denied(self, name):
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in self.blocked):
            return "Tool function '%s' is blocked by this server's policy (blocked_functions)." % name
        if self.allowed is not None and not any(fnmatch.fnmatchcase(name, p) for p in self.allowed):
            return "Tool function '%s' is not in this server's allowed_functions policy." % name
        return None

    def list_tools(self):
        """Print every available tool function with its signature and description."""
        print("Available tools:")
        for tool in self.tools:
            print("  " + _render_signature(tool))
            for line in tool["description"].splitlines() or [""]:
                print("      " + line)
            print("")


def install(namespace, tools):
    """Defines one proxy per tool plus list_tools() in `namespace`; returns the runtime."""
    runtime = Runtime(tools)
    for tool in tools:
        namespace[tool["name"]] = make_proxy(tool, runtime)
    namespace["list_tools"] = runtime.list_tools
    return runtime
