"""What a kernel start needs of ``json`` and ``ast``, without importing either.

Stdlib only (Python >= 3.8). Every kernel start used to import ``json`` (which imports ``re``, ``enum``, ``functools``
and ``collections``) and ``ast`` (``enum`` and ``contextlib`` again): about a third of what a kernel's interpreter
does before its first cell, and every new session and every batch item pays it. The C halves of both modules load in
a fraction of that, and are what the pure-Python halves call anyway:

- ``loads``/``dumps``: ``json.loads``/``json.dumps`` (compact separators aside: ``", "`` and ``": "``, ASCII output,
  circular references refused) on ``_json``'s scanner and encoder.
- ``parse``: ``ast.parse`` (``compile`` with ``PyCF_ONLY_AST``); the node classes are ``_ast``'s, the same classes
  ``ast`` re-exports.

User code that imports ``json`` or ``ast`` gets the real modules, as always.
"""
import _ast

try:
    import _json
except ImportError:  # an interpreter without the C accelerator: the pure-Python modules, as before
    _json = None

__all__ = ("dumps", "loads", "parse")

_WHITESPACE = " \t\n\r"


def parse(source, filename="<unknown>", mode="exec"):
    """``ast.parse(source, filename, mode)``."""
    return compile(source, filename, mode, _ast.PyCF_ONLY_AST)


class _Context(object):
    """The decoder settings ``_json.make_scanner`` reads: ``json.loads``'s defaults."""
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name):
        return float({"-Infinity": "-inf", "Infinity": "inf", "NaN": "nan"}[name])


def _not_serializable(o):
    raise TypeError("Object of type %s is not JSON serializable" % type(o).__name__)


def _c_codec():
    """``_json``'s scanner and an encoder factory, or None where they are missing or take other arguments."""
    try:
        scan = _json.make_scanner(_Context())

        def encoder(allow_nan):
            return _json.make_encoder({}, _not_serializable, _json.encode_basestring_ascii, None, ": ", ", ",
                                      False, False, allow_nan)
        if "".join(encoder(False)([1, "\u00e9", {"a": None}], 0)) == '[1, "\\u00e9", {"a": null}]':
            return scan, encoder
    except Exception:  # noqa: B902 - any surprise of a private API means: use the public one
        pass
    return None


_codec = _c_codec() if _json is not None else None

if _codec is not None:
    _scan, _encoder = _codec

    def loads(text):
        """``json.loads(text)``; ``text`` is ``str`` or UTF-8 ``bytes``. Raises ``ValueError`` on bad JSON."""
        if isinstance(text, (bytes, bytearray)):
            text = text.decode("utf-8")
        start = 0
        while start < len(text) and text[start] in _WHITESPACE:  # no copy of a 16 MiB command to skip nothing
            start += 1
        try:
            value, end = _scan(text, start)
        except StopIteration as e:
            raise ValueError("Expecting value: char %d" % e.value) from None
        if text[end:].strip(_WHITESPACE):
            raise ValueError("Extra data: char %d" % end)
        return value

    def dumps(value, allow_nan=True):
        """``json.dumps(value, allow_nan=allow_nan)``. Raises ``TypeError`` or ``ValueError`` as it does."""
        return "".join(_encoder(allow_nan)(value, 0))
else:
    def loads(text):
        import json
        return json.loads(text)

    def dumps(value, allow_nan=True):
        import json
        return json.dumps(value, allow_nan=allow_nan)
