"""Describes a Python module's public functions as Stoa tool manifest entries, for `stoa tools import`.

Usage: python3 stoa_introspect.py <module> [<dir added to sys.path> ...]
Prints one JSON object: {"module": ..., "tools": [...], "warnings": [...]}. Importing the module runs its top-level
code, exactly as a kernel does when it injects the tools.
"""
import builtins
import importlib
import inspect
import json
import re
import sys
import typing

SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Returns|Return|Yields|Raises|Examples?|Notes?)\s*:?\s*$")
GOOGLE_ARG = re.compile(r"^\s*\*{0,2}(\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")
NUMPY_ARG = re.compile(r"^(\w+)\s+:\s*(.*)$")
SPHINX_PARAM = re.compile(r"^:param\s+(?:[\w.\[\], ]+\s+)?(\w+):\s*(.*)$")
SPHINX_RETURN = re.compile(r"^:returns?:\s*(.*)$")
TYPE_NAME = re.compile(r"^[A-Za-z_][\w.:]*$")


def type_name(annotation):
    """A manifest type name: str, int, list, networkx.Graph, …; generics and unions keep their outer type."""
    if annotation is inspect.Parameter.empty or annotation is typing.Any:
        return None
    if isinstance(annotation, str):
        outer = re.split(r"[\[|, ]", annotation.strip(), maxsplit=1)[0]
        return outer if TYPE_NAME.match(outer) else None
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if origin is typing.Union or type(annotation).__name__ == "UnionType":
        return type_name(args[0]) if len(args) == 1 else "object"
    if origin is not None:
        return type_name(origin)
    if annotation is None or annotation is type(None):
        return "None"
    if isinstance(annotation, type):
        if getattr(builtins, annotation.__name__, None) is annotation:
            return annotation.__name__
        return f"{annotation.__module__.split('.')[0]}.{annotation.__qualname__}"
    return None


def is_optional(annotation):
    return type(None) in typing.get_args(annotation)


def json_default(value):
    """The default as JSON, or (False, None) when it has no JSON form (then the parameter is only optional)."""
    try:
        json.dumps(value)
        return True, value
    except (TypeError, ValueError):
        return False, None


def parse_docstring(doc):
    """Summary, per-parameter descriptions and the returns text of a Google, NumPy or Sphinx style docstring."""
    summary, params, returns = [], {}, []
    section, current = None, None
    lines = (doc or "").splitlines()
    for i, raw in enumerate(lines):
        line = raw.strip()
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        header = SECTION.match(line)
        if header and (line.endswith(":") or set(nxt) <= {"-"} and nxt):
            section, current = header.group(1).lower(), None
            continue
        if set(line) <= {"-"} and line:
            continue
        sphinx = SPHINX_PARAM.match(line)
        if sphinx:
            current = sphinx.group(1)
            params[current] = sphinx.group(2)
            section = "sphinx"
            continue
        sphinx_ret = SPHINX_RETURN.match(line)
        if sphinx_ret:
            returns.append(sphinx_ret.group(1))
            section, current = "returns", None
            continue
        if section is None:
            if not line and summary:
                section = "body"
            elif line:
                summary.append(line)
        elif section in ("args", "arguments", "parameters", "params"):
            indent = len(raw) - len(raw.lstrip())
            numpy = NUMPY_ARG.match(raw)  # "name : type", its description indented below
            arg = numpy or GOOGLE_ARG.match(raw)
            if arg and (indent <= 4 or current is None):
                current = arg.group(1)
                params[current] = "" if numpy else arg.group(3).strip()
            elif current and line:
                params[current] = (params[current] + " " + line).strip()
        elif section in ("returns", "return", "yields") and line:
            returns.append(line)
        elif section == "sphinx" and current and line:
            params[current] = (params[current] + " " + line).strip()
    if len(returns) > 1 and TYPE_NAME.match(returns[0]):
        returns = returns[1:]  # NumPy style: the type alone on the first line
    returns_text = re.sub(r"^[\w.\[\]]+:\s+", "", " ".join(returns))  # Google style "type: text"
    return " ".join(summary), params, returns_text


def describe(name, fn, module_name, warnings):
    summary, docs, returns_doc = parse_docstring(inspect.getdoc(fn))
    try:
        hints = typing.get_type_hints(fn)
    except Exception as err:  # unresolvable forward references: fall back to the raw annotations
        warnings.append(f"{name}: type hints not resolvable ({err}); using their text")
        hints = {}
    signature = inspect.signature(fn)
    parameters = []
    for p in signature.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            warnings.append(f"{name}: *{p.name} is not part of the tool's parameters")
            continue
        annotation = hints.get(p.name, p.annotation)
        entry = {"name": p.name, "type": type_name(annotation) or "Any", "description": docs.get(p.name, "")}
        if p.default is not p.empty:
            ok, value = json_default(p.default)
            if ok:
                entry["default"] = value
            else:
                entry["required"] = False
                warnings.append(f"{name}: the default of {p.name} has no JSON form; it is listed as optional")
        elif is_optional(annotation):
            entry["required"] = True
        if not entry["description"]:
            warnings.append(f"{name}: parameter {p.name} has no description in the docstring")
        parameters.append(entry)
    if not summary:
        warnings.append(f"{name}: no docstring; write one (agents find tools by their descriptions)")
        summary = f"{name}({', '.join(p['name'] for p in parameters)})"
    returned = hints.get("return", signature.return_annotation)
    tool = {"name": name, "description": summary, "parameters": parameters, "module": module_name}
    ret_type = type_name(returned)
    if ret_type and ret_type != "None" or returns_doc:
        tool["returns"] = {"name": "result", "type": ret_type or "dict", "description": returns_doc}
    return tool


def main():
    module_name = sys.argv[1]
    for path in reversed(sys.argv[2:]):
        sys.path.insert(0, path)
    module = importlib.import_module(module_name)
    warnings = []
    functions = [
        (name, fn)
        for name, fn in inspect.getmembers(module, inspect.isfunction)
        if not name.startswith("_") and fn.__module__ == module.__name__
    ]
    functions.sort(key=lambda item: inspect.getsourcelines(item[1])[1])
    tools = [describe(name, fn, module.__name__, warnings) for name, fn in functions]
    json.dump({"module": module.__name__, "tools": tools, "warnings": warnings}, sys.stdout)


if __name__ == "__main__":
    main()
