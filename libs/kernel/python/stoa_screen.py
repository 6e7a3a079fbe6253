"""Stoa code screen: the reference server's default ``validate_code`` (spec §3.8), stdlib only.

This is agent *guidance*, not a security boundary: it steers a model away from filesystem
exploration, shelling out and hard-coded paths, and tells it what to do instead. It is easy to
bypass on purpose (``importlib.import_module``, ``os.popen``, non-literal paths, ``open()`` of
relative paths are not caught, exactly like the reference).

Public API: ``validate_code(code, ...) -> (ok, message)`` and ``disallowed_actions_text(prefixes, ...)``
(the "Disallowed actions" block of the execute tool description, spec §1.2 (c)).
"""
import _ast as ast  # the node classes, which ast re-exports; ast.py itself imports enum and contextlib
import posixpath

import stoa_lean

BLOCKED_MODULES = frozenset({
    "subprocess", "shutil", "ftplib", "telnetlib", "smtplib", "http.server", "socketserver",
})
# Family -> call names. A receiver that traces back to a family is blocked only for that family's names.
BLOCKED_FS_CALLS = {
    "os": frozenset({
        "listdir", "scandir", "walk", "fwalk", "getcwd", "chdir", "fchdir", "remove", "unlink", "rmdir",
        "removedirs", "rename", "renames", "replace", "link", "symlink", "readlink", "system",
    }),
    "glob": frozenset({"glob", "iglob"}),
    "pathlib": frozenset({"iterdir", "rglob"}),
}
BLOCKED_DANGEROUS_CALLS = frozenset({"__import__", "eval", "exec", "compile", "getattr"})
DEFAULT_ALLOWED_PATH_PREFIXES = ("/tmp",)

# Assigning the result of one of these constructors taints the target with the pathlib family.
PATH_CONSTRUCTORS = frozenset({
    "Path", "PurePath", "PosixPath", "WindowsPath", "PurePosixPath", "PureWindowsPath",
})
# A lone "/" passed to one of these string methods is a separator, not a path.
SEPARATOR_METHODS = frozenset({
    "split", "rsplit", "partition", "rpartition", "join", "strip", "lstrip", "rstrip", "replace",
})
TAINT_PASSES = 3

# --- Agent guidance ("redirect" messages: problem first, then one bullet per legitimate intent) ---

FIND_DATA = (
    "To FIND data: the filesystem cannot be explored from the sandbox. Ask the user where the data "
    "lives, or use this server's data-catalog tools if it has any, then load it as described below."
)
LOAD_ASSET = (
    "To LOAD a known file or data-lake asset: reference it inline as a string literal, "
    "<local>/path/to/file</local> or <blob>artifact-id</blob> (the only resolvable tag types); the "
    "tag is replaced by a pathlib.Path to a locally cached copy before your code runs."
)
SAVE_OUTPUT = (
    "To SAVE a file for the user: write it to agora_output('name.ext') or to a path inside "
    "AGORA_OUTPUT_DIR (both are pre-defined in the kernel); files there are shown to the user."
)
SCRATCH_ONLY = "For internal scratch files only (not visible to the user): {prefixes}."
NO_OTHER_PATHS = "Do not hardcode any other absolute path."


def redirect(problem, intents):
    """Build a steering message: the problem sentence, then one bullet per intent."""
    return "\n".join(["%s Depending on what you are doing:" % problem] + ["- %s" % i for i in intents])


def _scratch(prefixes):
    return SCRATCH_ONLY.format(prefixes=", ".join(prefixes) if prefixes else "(none)")


def _import_error(kind, name, blocked_modules):
    problem = (
        "Importing %s'%s' is not allowed in the code execution environment. Blocked modules: %s. "
        "Shelling out and direct filesystem/network I/O are not available in the sandbox."
        % (kind, name, ", ".join(sorted(blocked_modules)))
    )
    return redirect(problem, [FIND_DATA, LOAD_ASSET, SAVE_OUTPUT])


def _call_error(name):
    problem = (
        "Call to '%s' is not allowed — filesystem exploration/manipulation and dangerous "
        "metaprogramming functions are blocked in the code execution environment." % name
    )
    return redirect(problem, [FIND_DATA, LOAD_ASSET, SAVE_OUTPUT])


def _traversal_error():
    problem = "Relative path traversal using '..' is not allowed in the code execution environment."
    return redirect(problem, [LOAD_ASSET, SAVE_OUTPUT])


def _absolute_path_error(path, prefixes):
    problem = "Absolute path '%s' is outside the allowed directories." % path
    return redirect(problem, [SAVE_OUTPUT, LOAD_ASSET, _scratch(prefixes)]) + "\n" + NO_OTHER_PATHS


# --- Rules ---


def _has_parent_traversal(value):
    if not value or "://" in value or value.startswith("//"):
        return False  # URL-like: traversal rules are for filesystem paths only
    return ".." in value.replace("\\", "/").split("/")


def _is_allowed_absolute(value, prefixes):
    for prefix in prefixes:
        base = prefix.rstrip("/")
        if not base or value == prefix or value == base or value.startswith(base + "/"):
            return True
    return False


def _path_violation(value, prefixes):
    """Traversal / absolute-prefix rules for one (constant or reconstructed) string, or None."""
    value = value.strip()
    if _has_parent_traversal(value):
        return _traversal_error()
    if value.startswith("/") and not value.startswith("//") and not _is_allowed_absolute(value, prefixes):
        return _absolute_path_error(value, prefixes)
    return None


def _module_prefixes(dotted):
    parts = dotted.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _is_str(node):
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _root_name(node):
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _static_string(node):
    """Best-effort static value of a string expression; runtime f-string parts become '{expr}'."""
    if _is_str(node):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if _is_str(value):
                parts.append(value.value)
            elif isinstance(value, ast.FormattedValue):
                parts.append("{expr}")
            else:
                return None
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _static_string(node.left), _static_string(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _static_string(node.left)  # '/etc/%s' % x is rooted at '/etc/'
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _static_string(node.func.value)
    return None


def _walk(tree):
    """Every node under `tree` (itself included) in ``ast.walk``'s order, as a list: the screen's passes share one
    walk, and this loop is several times faster than ``ast.walk``'s generators."""
    nodes = [tree]
    node_type = ast.AST
    for node in nodes:  # appending while iterating: a breadth-first walk
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, node_type):
                nodes.append(value)
            elif isinstance(value, list):
                nodes.extend(item for item in value if isinstance(item, node_type))
    return nodes


class _Screen(object):
    def __init__(self, tree, allowed_prefixes, blocked_modules, blocked_calls, dangerous_calls):
        self.tree = tree
        self.nodes = _walk(tree)
        self.prefixes = tuple(allowed_prefixes)
        self.blocked_modules = frozenset(blocked_modules)
        self.families = {family: frozenset(names) for family, names in blocked_calls.items()}
        self.dangerous = frozenset(dangerous_calls)
        self.all_blocked = frozenset().union(self.dangerous, *self.families.values())
        # Local names bound by `import x.y [as z]` in this cell -> full module name.
        self.aliases = {}
        for node in self.nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self.aliases[alias.asname or alias.name.split(".")[0]] = alias.name
        self.taint = self._build_taint()
        self.safe_slashes = self._collect_separator_slashes()

    def _build_taint(self):
        """Map variable names to the blocked family (os/glob/pathlib) they trace back to."""
        taint = {name: name for name in self.families if name not in self.aliases}  # literal `os.` etc.
        for local, module in self.aliases.items():
            root = module.split(".")[0]
            if root in self.families:
                taint[local] = root
        assigns = [n for n in self.nodes
                   if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)]
        for _ in range(TAINT_PASSES if assigns else 0):
            changed = False
            for node in assigns:
                target = node.targets[0]
                family = self._rhs_family(node.value, taint)
                if family and taint.get(target.id) != family:
                    taint[target.id] = family
                    changed = True
            if not changed:
                break
        return taint

    def _rhs_family(self, value, taint):
        if isinstance(value, ast.Call):
            func = value.func
            if isinstance(func, ast.Name) and func.id in PATH_CONSTRUCTORS and "pathlib" in self.families:
                return "pathlib"  # p = Path(...)
            if isinstance(func, ast.Attribute) and func.attr in PATH_CONSTRUCTORS:
                return taint.get(_root_name(func.value))  # p = pathlib.Path(...)
            return None
        if isinstance(value, (ast.Name, ast.Attribute)):
            return taint.get(_root_name(value))  # q = p / pp = os.path
        return None

    def _collect_separator_slashes(self):
        safe = set()
        for node in self.nodes:
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr in SEPARATOR_METHODS:
                for arg in list(node.args) + [kw.value for kw in node.keywords]:
                    if _is_str(arg) and arg.value == "/":
                        safe.add(id(arg))
            if node.func.attr == "join" and _is_str(node.func.value) and node.func.value.value == "/":
                safe.add(id(node.func.value))  # "/".join(parts)
        return safe

    def _call_blocked(self, call):
        func = call.func
        if isinstance(func, ast.Name):
            return func.id if func.id in self.all_blocked else None  # bare call: checked directly
        if not isinstance(func, ast.Attribute):
            return None
        name = func.attr
        if not isinstance(func.value, ast.Name):
            return None  # Path('/tmp').iterdir(), a.b.fn(): receiver is not a plain name
        receiver = func.value.id
        family = self.taint.get(receiver)
        if family is not None:
            return name if name in self.families.get(family, ()) else None
        if receiver in self.aliases:
            return name if name in self.all_blocked else None  # `import re; re.compile(x)`
        return None  # df.rename(), model.eval(), ...

    def _os_path_join(self, call):
        """Statically join os.path.join(<const>, ...) up to the first runtime-only part."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "join"):
            return None
        recv = func.value
        if isinstance(recv, ast.Attribute) and recv.attr == "path" and isinstance(recv.value, ast.Name):
            is_os_path = self.taint.get(recv.value.id) == "os"
        else:
            is_os_path = isinstance(recv, ast.Name) and self.aliases.get(recv.id) == "os.path"
        if not is_os_path or not call.args:
            return None
        parts = []
        for arg in call.args:
            value = _static_string(arg)
            if value is None:
                break
            parts.append(value)
        return posixpath.join(*parts) if parts else None

    def dynamic_candidates(self, node):
        found = [_static_string(node)]
        if isinstance(node, ast.Call):
            found.append(self._os_path_join(node))
        return [c for c in found if c is not None]

    def run(self):
        for node in self.nodes:  # first violation wins, in ast.walk order
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if any(p in self.blocked_modules for p in _module_prefixes(alias.name)):
                        return _import_error("", alias.name, self.blocked_modules)
            elif isinstance(node, ast.ImportFrom):
                if node.module and any(p in self.blocked_modules for p in _module_prefixes(node.module)):
                    return _import_error("from ", node.module, self.blocked_modules)
            elif _is_str(node):
                if id(node) not in self.safe_slashes:
                    message = _path_violation(node.value, self.prefixes)
                    if message:
                        return message
            elif isinstance(node, (ast.BinOp, ast.JoinedStr, ast.Call)):
                blocked = self._call_blocked(node) if isinstance(node, ast.Call) else None
                if blocked:
                    return _call_error(blocked)
                for candidate in self.dynamic_candidates(node):
                    message = _path_violation(candidate, self.prefixes)
                    if message:
                        return message
        return None


def validate_code(code, allowed_prefixes=DEFAULT_ALLOWED_PATH_PREFIXES, blocked_modules=None,
                  blocked_calls=None, dangerous_calls=None, tree=None):
    """Screen one cell. Returns ``(True, None)`` or ``(False, message)``. ``tree`` is ``ast.parse(code)`` when the
    caller already has it (the driver parses each cell once); it is only read.

    ``blocked_calls`` is a mapping family -> call names (default BLOCKED_FS_CALLS); receivers imported
    from, assigned from or literally named after a family are blocked only for that family's names.
    """
    if not code or not code.strip():
        return False, "Code cannot be empty"
    if tree is None:
        try:
            tree = stoa_lean.parse(code)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return True, None  # the kernel's compile step reports it (a syntax error, or a cell too big to parse)
    screen = _Screen(
        tree,
        allowed_prefixes,
        BLOCKED_MODULES if blocked_modules is None else blocked_modules,
        BLOCKED_FS_CALLS if blocked_calls is None else blocked_calls,
        BLOCKED_DANGEROUS_CALLS if dangerous_calls is None else dangerous_calls,
    )
    message = screen.run()
    return (message is None), message


def disallowed_actions_text(allowed_prefixes=DEFAULT_ALLOWED_PATH_PREFIXES, blocked_modules=None,
                            blocked_calls=None, dangerous_calls=None):
    """The "Disallowed actions" block (plus the asset auto-resolution paragraph) of the execute tool."""
    families = BLOCKED_FS_CALLS if blocked_calls is None else blocked_calls

    def listing(items):
        items = sorted(set(str(i) for i in items))
        return ", ".join(items) if items else "(none)"

    return (
        "Disallowed actions:\n"
        "- Blocked imports: %s\n"
        "- Blocked calls: %s\n"
        "- Blocked dangerous calls: %s\n"
        "- Relative path traversal using '..' segments is blocked.\n"
        "- Absolute path literals are allowed only under %s (internal scratch, not visible to the "
        "user). Save files for the user with agora_output('filename') or under AGORA_OUTPUT_DIR (both "
        "pre-defined); load data with an asset tag (e.g. <local>/path/to/file</local>), not a path.\n"
        "\n"
        "Auto-resolution of assets:\n"
        "An asset tag (<local>path</local> or <blob>id</blob>) written as a complete string literal "
        "(assigned, passed, returned, or inside a list/dict/tuple/set literal) is replaced by a "
        "pathlib.Path to a locally cached copy of the file."
        % (
            listing(BLOCKED_MODULES if blocked_modules is None else blocked_modules),
            listing(name for names in families.values() for name in names),
            listing(BLOCKED_DANGEROUS_CALLS if dangerous_calls is None else dangerous_calls),
            listing(allowed_prefixes),
        )
    )
