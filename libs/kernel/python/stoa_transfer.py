"""Asset tags, handle ids and object transfer for Stoa kernels (stdlib only, Python >= 3.8).

* find_literals / rewrite: the reference's AST-based literal extraction (spec 2.8.2). String literals that are
  asset tags (<local>/data/x.csv</local>) or handle ids (h_0123456789ab) in qualifying positions are replaced
  by synthetic variables bound to a pathlib.Path (assets) or to the loaded object (handles).
* dump / load: serialise one object to a file and back (dill, else cloudpickle, else pickle), or through a unix
  socket the host listens on (the host streams the bytes on without a file in between).
* make_stash: the kernel's stash(obj) -> handle id.

Optional third-party serializers are imported only when used.
"""
import os
import stat

import stoa_lean

# ast and re are imported by the functions that need them: only code with an asset tag or a handle id (the host
# looks first) and a transfer get there, and every kernel start would pay ~5 ms of CPU for the two.
SERIALIZERS = ("pickle", "cloudpickle", "dill")
ASSET_VAR = "__agora_asset_%d"
HANDLE_VAR = "__stoa_handle_%d"
LOAD_HELPER = "__stoa_load__"
_PATTERNS = {}


def _pattern(name):
    """A compiled pattern: ``tag`` / ``unclosed_tag`` / ``handle`` / ``newline``."""
    if not _PATTERNS:
        import re
        _PATTERNS.update(
            # \Z, not $: a trailing newline does not make a tag (as with the host's JavaScript patterns).
            tag=re.compile(r"^<(\w+)>([^<>]+)</\1>\Z"),
            unclosed_tag=re.compile(r"^<(\w+)>([^<>]+)\Z"),
            handle=re.compile(r"^h_[0-9a-f]{12}\Z"),
            newline=re.compile(r"\r\n|\r|\n"),
        )
    return _PATTERNS[name]


def is_asset_tag(text):
    return bool(_pattern("tag").match(text) or _pattern("unclosed_tag").match(text))


def is_handle_id(text):
    return bool(_pattern("handle").match(text))


# --- literal extraction -------------------------------------------------------------------------------------

class _Occurrence(object):
    __slots__ = ("value", "start", "end", "lines", "owner_class")

    def __init__(self, value, start, end, lines, owner_class):
        self.value = value
        self.start = start  # character offsets into the code
        self.end = end
        self.lines = lines  # number of source lines the literal spans
        self.owner_class = owner_class  # innermost enclosing class name (Python mangles __names there)


def _parents(tree):
    import ast
    parents = {}
    for node in ast.walk(tree):
        for field, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            for child in children:
                if isinstance(child, ast.AST):
                    parents[id(child)] = (node, field)
    return parents


def _qualifies(node, parents):
    """Spec 2.8.2: the first ancestor of a listed kind decides; other kinds in between are skipped."""
    import ast
    child = node
    while id(child) in parents:
        parent, field = parents[id(child)]
        if isinstance(parent, (ast.Assign, ast.AnnAssign)):
            return field == "value"
        if isinstance(parent, ast.Call):
            return field in ("args", "keywords")
        if isinstance(parent, (ast.keyword, ast.Return, ast.Dict, ast.List, ast.Tuple, ast.Set)):
            return True
        child = parent
    return False


def _context(node, parents):
    """(inside an f-string, innermost enclosing class name or None)."""
    import ast
    owner = None
    child = node
    while id(child) in parents:
        parent = parents[id(child)][0]
        if isinstance(parent, ast.JoinedStr):
            return True, None
        if owner is None and isinstance(parent, ast.ClassDef):
            owner = parent.name
        child = parent
    return False, owner


def _char_offset(code, starts, lineno, col):
    """The parser's (line, UTF-8 byte column) as a character offset into `code`."""
    begin = starts[lineno - 1]
    end = starts[lineno] if lineno < len(starts) else len(code)
    head = code[begin:end].encode("utf-8", "surrogatepass")[:col]
    return begin + len(head.decode("utf-8", "surrogatepass"))


def _span_matches(text, value):
    import ast
    # Guards against parser position quirks: never replace text that is not exactly this literal.
    try:
        return ast.literal_eval("(" + text + "\n)") == value
    except (SyntaxError, ValueError):
        return False


def _scan(code):
    """(qualifying occurrences in source order, Name ids used in the code); ([], set()) on a syntax error."""
    import ast
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # ValueError: null bytes (Python < 3.12)
        return [], set()
    parents = _parents(tree)
    starts = [0] + [m.end() for m in _pattern("newline").finditer(code)]
    names = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
            continue
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        if not (is_asset_tag(node.value) or is_handle_id(node.value)) or not _qualifies(node, parents):
            continue
        in_fstring, owner = _context(node, parents)
        if in_fstring or getattr(node, "end_lineno", None) is None:
            continue
        start = _char_offset(code, starts, node.lineno, node.col_offset)
        end = _char_offset(code, starts, node.end_lineno, node.end_col_offset)
        if _span_matches(code[start:end], node.value):
            found.append(_Occurrence(node.value, start, end, node.end_lineno - node.lineno + 1, owner))
    found.sort(key=lambda o: o.start)
    return found, names


def find_literals(code):
    """Asset tags and handle ids in qualifying positions (spec 2.8.2), unique, in source order."""
    seen = []
    for occurrence in _scan(code)[0]:
        if occurrence.value not in seen:
            seen.append(occurrence.value)
    return seen


def _check_target(literal, target):
    if not isinstance(target, dict) or not isinstance(target.get("path"), str) or not target["path"]:
        raise ValueError("rewrite: the target of %r needs a non-empty 'path'" % (literal,))
    kind = target.get("kind")
    if kind == "object" and target.get("serializer") not in SERIALIZERS:
        raise ValueError("rewrite: object %r has serializer %r; expected one of %s"
                         % (literal, target.get("serializer"), ", ".join(SERIALIZERS)))
    if kind not in ("path", "object"):
        raise ValueError("rewrite: the target of %r has kind %r; expected 'path' or 'object'" % (literal, kind))


def _fresh(pattern, counter, used):
    while pattern % counter[0] in used:
        counter[0] += 1
    name = pattern % counter[0]
    counter[0] += 1
    used.add(name)
    return name


def rewrite_parts(code, mapping):
    """(preamble, body): body is `code` with every qualifying literal of `mapping` replaced by its synthetic
    variable, keeping every user line on its line number (a multi-line literal becomes backslash continuations
    plus the name); preamble binds the variables. Both empty/unchanged when nothing is replaced."""
    occurrences, used = _scan(code)
    occurrences = [o for o in occurrences if o.value in mapping]
    variables = {}
    assets, handles = [0], [0]
    lines = []
    for occurrence in occurrences:
        if occurrence.value in variables:
            continue
        target = mapping[occurrence.value]
        _check_target(occurrence.value, target)
        if target["kind"] == "path":
            name = _fresh(ASSET_VAR, assets, used)
            lines.append("%s = __agora_pathlib.Path(%r)" % (name, target["path"]))
        else:
            name = _fresh(HANDLE_VAR, handles, used)
            lines.append("%s = %s(%r, %r)" % (name, LOAD_HELPER, target["path"], target["serializer"]))
        variables[occurrence.value] = name
    if not lines:
        return "", code
    aliases = set()
    body = code
    for occurrence in reversed(occurrences):
        name = variables[occurrence.value]
        body = body[:occurrence.start] + "\\\n" * (occurrence.lines - 1) + name + body[occurrence.end:]
        if occurrence.owner_class and occurrence.owner_class.strip("_"):
            # Inside a class body Python reads __agora_asset_0 as _Class__agora_asset_0: bind that name too.
            aliases.add("_%s%s = %s" % (occurrence.owner_class.lstrip("_"), name, name))
    preamble = ["import pathlib as __agora_pathlib"] + lines + sorted(aliases)
    return "\n".join(preamble) + "\n", body


# --- serialisation ------------------------------------------------------------------------------------------

class TooLarge(Exception):
    def __init__(self, size, limit):
        Exception.__init__(self, "serialises to %d bytes, over the %d-byte limit" % (size, limit))
        self.size = size
        self.limit = limit


class _Sink(object):
    """A file wrapper that stops writing past `limit` but keeps counting (so the error can say how big)."""

    def __init__(self, raw, limit):
        self.raw = raw
        self.limit = limit
        self.size = 0

    def write(self, data):
        n = memoryview(data).nbytes
        self.size += n
        if self.limit is None or self.size <= self.limit:
            self.raw.write(data)
        return n


def best_serializer():
    """dill if importable, else cloudpickle, else pickle."""
    for name in ("dill", "cloudpickle"):
        try:
            __import__(name)
            return name
        except Exception:  # ImportError, or a broken installation
            continue
    return "pickle"


def _serializer_module(serializer):
    if serializer not in SERIALIZERS:
        raise ValueError("unknown serializer %r; expected one of %s" % (serializer, ", ".join(SERIALIZERS)))
    try:
        return __import__(serializer)
    except ImportError:
        raise ModuleNotFoundError("%s is not installed in this kernel's environment." % serializer,
                                  name=serializer) from None


def _write_atomic(path, write):
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, ".%s.%s.tmp" % (os.path.basename(path), os.urandom(4).hex()))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as raw:
            result = write(raw)
        os.replace(tmp, path)
        return result
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _is_socket(path):
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False


def _connect(path):
    import socket  # only for transfers: every kernel start would pay ~4 ms for it
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except BaseException:
        sock.close()
        raise
    return sock


class _SocketWriter(object):
    """Writes to the host's socket, connecting on the first write: a dump that fails before any output (most
    unpicklable objects) never opens the host's stream. The stream opens with the serializer's name on a line of
    its own. Large buffers go to the socket as they are, uncopied."""

    def __init__(self, path, serializer):
        self.path = path
        self.preamble = serializer.encode("ascii") + b"\n"
        self.sock = None

    def write(self, data):
        if self.sock is None:
            self.sock = _connect(self.path)
            self.sock.sendall(self.preamble)
        self.sock.sendall(data)

    def close(self):
        if self.sock is not None:
            self.sock.close()


def dump(obj, path, serializer=None, max_bytes=None):
    """Serialises `obj` to `path` (mode 0600, written atomically; or streamed into `path` when it is a unix socket
    the host listens on) -> (serializer, size in bytes). Over `max_bytes` nothing more is written and TooLarge is
    raised (with the full size: the rest is serialised and counted, not kept)."""
    import pickle
    serializer = serializer or best_serializer()
    module = _serializer_module(serializer)

    def write(raw):
        sink = _Sink(raw, max_bytes)
        module.dump(obj, sink, protocol=pickle.HIGHEST_PROTOCOL)
        if max_bytes is not None and sink.size > max_bytes:
            raise TooLarge(sink.size, max_bytes)
        return sink.size

    if _is_socket(path):
        writer = _SocketWriter(path, serializer)
        try:
            return serializer, write(writer)
        finally:
            writer.close()
    return serializer, _write_atomic(path, write)


def describe_dump_error(exc):
    """`Type: message` of a failed dump, with what would help when only plain pickle was available."""
    import pickle
    text = "%s: %s" % (type(exc).__name__, exc)
    # Lambdas, closures and local classes: PicklingError, or AttributeError "Can't get local object" (3.13+).
    if isinstance(exc, (pickle.PicklingError, AttributeError)) and best_serializer() == "pickle":
        text += (" (this kernel serialises with plain pickle; dill or cloudpickle in its environment would also "
                 "serialise lambdas, closures and locally defined classes)")
    return text


def load(path, serializer):
    """The object in `path`, written by dump() with `serializer` (possibly in another kernel); `path` may be a unix
    socket the host listens on, which streams exactly one serialised object and then closes."""
    if serializer not in SERIALIZERS:
        raise ValueError("unknown serializer %r; expected one of %s" % (serializer, ", ".join(SERIALIZERS)))
    if not _is_socket(path):
        with open(path, "rb") as f:
            return _load_from(_HugePageReader(f), serializer)
    sock = _connect(path)
    try:
        with sock.makefile("rb") as f:
            obj = _load_from(_HugePageReader(f), serializer)
            if f.read(1):
                raise ValueError("The object stream continues after the end of the serialised object: the sender "
                                 "sent something else than one object. Send the object again.")
            return obj
    finally:
        sock.close()


_HUGE_PAGE = 2 << 20
_MADV_HUGEPAGE = 14
_madvise = None


def _advise_huge_pages(view):
    """Asks Linux to back the 2 MiB-aligned inside of `view` (memory just allocated and not yet touched) with
    transparent huge pages: it is then faulted in 2 MiB steps, not 4 KiB ones. Best effort, silent."""
    global _madvise
    try:
        if _madvise is None:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            _madvise = (ctypes, libc.madvise)
        ctypes, madvise = _madvise
        address = ctypes.addressof(ctypes.c_char.from_buffer(view))
        start = (address + _HUGE_PAGE - 1) & ~(_HUGE_PAGE - 1)
        end = (address + view.nbytes) & ~(_HUGE_PAGE - 1)
        if end > start:
            madvise(start, end - start, _MADV_HUGEPAGE)
    except Exception:  # not Linux, no libc, a read-only view: 4 KiB pages, as before
        pass


class _HugePageReader(object):
    """The unpickler's file: a large object (a numpy array's data, a bytearray) is read straight into the buffer the
    unpickler just allocated for it, which is advised for huge pages first. Where a page fault is expensive (VMs:
    ~10 us each here) this is most of a large load: 100 MB in 285 ms with 4 KiB pages, 15 ms with 2 MiB ones."""

    def __init__(self, raw):
        self.raw = raw
        self.read = raw.read
        self.readline = raw.readline

    def peek(self, n=0):
        return self.raw.peek(n)

    def readinto(self, buffer):
        view = memoryview(buffer)
        if view.nbytes >= 2 * _HUGE_PAGE and not view.readonly:
            _advise_huge_pages(view)
        return self.raw.readinto(buffer)


def _load_from(f, serializer):
    import pickle
    try:
        if serializer == "dill" and _importable("dill"):
            import dill
            return dill.load(f)
        # cloudpickle payloads are plain pickles that import cloudpickle themselves when they need it;
        # dill payloads of ordinary objects load the same way.
        return pickle.load(f)
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(_missing_module_message(exc, serializer), name=exc.name) from None
    except AttributeError as exc:
        if "Can't get attribute" not in str(exc):
            raise
        raise AttributeError(_missing_attribute_message(exc, serializer)) from None


def _importable(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False


def _missing_module_message(exc, serializer):
    module = (exc.name or "").split(".")[0]
    if module in ("dill", "cloudpickle"):
        return ("The sending kernel serialised this object with %s, and loading it needs %s, which is not "
                "installed in this kernel's environment. Install %s in this kernel's environment, or send a "
                "portable representation instead (a dict, a list, a DataFrame or a file)." % (serializer, module, module))
    return ("%s. The object refers to module '%s', which this kernel cannot import: install it in this kernel's "
            "environment, or send a portable representation instead (a dict, a list, a DataFrame or a file)."
            % (exc, exc.name))


def _missing_attribute_message(exc, serializer):
    text = ("%s. The object refers to a class or function that this kernel does not define (one defined in a "
            "cell of the sending kernel is looked up in __main__ here): run the same definition in this kernel "
            "first and load again, or send a portable representation (a dict, a list or a file)." % exc)
    if serializer == "pickle":
        text += (" The sender used plain pickle; with dill or cloudpickle installed in the sender's environment, "
                 "classes and functions defined in cells travel by value.")
    return text


# --- handles ------------------------------------------------------------------------------------------------

def make_stash(directory, max_bytes, record):
    """The namespace's stash(obj): saves obj under a new handle id in `directory` and calls record(handle)."""

    def stash(obj):
        """Save `obj` and return its handle id, a string such as 'h_0123456789ab'.

        The handle stands for the object in later code of the same user: this session, other sessions and
        batch items. Write it as a string literal where a value is expected, e.g.
        `df = "h_0123456789ab"` or `summarise("h_0123456789ab")`, and the object is loaded in its place.
        Objects that serialise to more than the handle limit are refused: stash a summary or a subset, or
        write a file to AGORA_OUTPUT_DIR instead.
        """
        handle = "h_" + os.urandom(6).hex()
        if not os.path.isdir(directory):
            os.makedirs(directory, mode=0o700, exist_ok=True)
        path = os.path.join(directory, handle + ".pkl")
        try:
            serializer, size = dump(obj, path, max_bytes=max_bytes)
        except TooLarge as exc:
            raise ValueError(
                "stash: object serialises to %d bytes, over the %d-byte handle limit. Stash a smaller object "
                "(e.g. a summary or a subset) or write a file to AGORA_OUTPUT_DIR instead." % (exc.size, exc.limit)) from None
        meta = stoa_lean.dumps({"serializer": serializer, "size": size, "type": type(obj).__name__}).encode("utf-8")
        _write_atomic(os.path.join(directory, handle + ".json"), lambda raw: raw.write(meta))
        record(handle)
        return handle

    return stash
