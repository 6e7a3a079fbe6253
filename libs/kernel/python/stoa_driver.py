"""Stoa kernel driver: one persistent Python namespace, run in the user-code process of stoa_supervisor.

Stdlib only (Python >= 3.8). The host starts this file; it confines itself and forks (stoa_supervisor.main).
The child runs the namespace: it reads ``<token> <json>`` commands from a private pipe and answers
``<token> <json>`` lines on another; the supervisor relays the answers to the host. The user's stdout/stderr stay on
fds 1 and 2 (pipes to the supervisor, which forwards them ahead of each answer) so fd-level output (C extensions,
os.write, child processes) is captured. This process never holds the host's pipes.
"""
import _ast
try:
    import _signal as signal  # signal.py wraps these in enums: it would import enum, functools and collections
except ImportError:  # an interpreter without it (not CPython)
    import signal
import io
import keyword
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stoa_lean  # noqa: E402 - json and ast without their imports (a third of a kernel's start)
import stoa_screen  # noqa: E402 - imported before the fork, so a new session's first cell does not pay for it
import stoa_transfer  # noqa: E402 - beside this file
from stoa_display import Displays  # noqa: E402
sys.path.pop(0)

REAP_STRAYS = os.environ.pop("STOA_REAP_STRAYS", "") == "1"
HANDLE_DIR = os.environ.pop("STOA_HANDLE_DIR", "")
HANDLE_MAX_BYTES = os.environ.pop("STOA_HANDLE_MAX_BYTES", "")
# Largest reply line (stoa_supervisor.MAX_LINE is a little more): a bigger one is replaced by an error reply.
MAX_REPLY_BYTES = 16 * 1024 * 1024
DRIVER_DIR = os.path.dirname(os.path.abspath(__file__))
# Filenames of the code objects compiled from the user's code: where a user-facing traceback starts.
USER_FILES = ("<cell-", "<asset-and-handle-literals>")

_in_user_code = False


def _user_call(fn, *args):
    """Runs fn with SIGINT enabled: it runs user code (cells, __reduce__, __setstate__, reprs)."""
    global _in_user_code
    _in_user_code = True
    try:
        return fn(*args)
    finally:
        _in_user_code = False


def _on_sigint(signum, frame):
    # Only user code is interruptible; a late SIGINT must never break the protocol loop.
    if _in_user_code:
        raise KeyboardInterrupt()


def _reap_strays():
    """After a timeout: end what the cell left running (fork bombs, busy children). Only where the kernel has
    its own pid namespace or uid, so every process it may signal is this kernel's; the supervisor (the parent)
    and init are spared."""
    import time
    if not REAP_STRAYS:
        return
    keep = (1, os.getpid(), os.getppid())
    # Until no other process is left: killed ones linger as zombies until the namespace's init reaps them, and
    # the next cell must not find them (bounded: a process stuck in the kernel is given up on after ~2 s).
    for _ in range(400):
        others = [int(n) for n in os.listdir("/proc") if n.isdigit() and int(n) not in keep and _ours(int(n))]
        if not others:
            return
        for pid in others:
            _kill_live(pid)
        while True:
            try:
                pid, _status = os.waitpid(-1, os.WNOHANG)
            except OSError:
                break
            if pid == 0:
                break
        time.sleep(0.005)


def _ours(pid):
    """A process this kernel may signal (its own, live or zombie), not merely one /proc shows."""
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def _kill_live(pid):
    """SIGKILL to a process this kernel may signal; False when it is gone, not ours, or already a zombie."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            if f.read().rpartition(b")")[2].split()[0] == b"Z":
                return False
        os.kill(pid, signal.SIGKILL)
        return True
    except (OSError, IndexError):
        return False


def _strip_driver_frames(te, seen):
    """Cuts a TracebackException chain to the user's frames: each traceback starts at the first cell frame
    (the driver's frames and the parse step's, with the interpreter's paths, go) and never shows a driver file."""
    if te is None or id(te) in seen:
        return
    seen.add(id(te))
    import traceback  # only on errors: ~2 ms of every kernel start otherwise
    stack = list(te.stack)
    first = next((i for i, f in enumerate(stack) if f.filename.startswith(USER_FILES)), len(stack))
    te.stack = traceback.StackSummary.from_list([f for f in stack[first:] if not f.filename.startswith(DRIVER_DIR + os.sep)])
    _strip_driver_frames(te.__cause__, seen)
    _strip_driver_frames(te.__context__, seen)


class Driver(object):
    def __init__(self, commands_fd, reply_fd):
        # The namespace is the __main__ module (as in IPython), so pickle finds classes and functions defined
        # in cells by reference: dump, stash and multiprocessing work with plain pickle too.
        self.driver_module = sys.modules["__main__"]
        main_module = types.ModuleType("__main__")
        sys.modules["__main__"] = main_module
        self.namespace = main_module.__dict__
        self.namespace["__builtins__"] = __builtins__
        self.displays = Displays()
        self.namespace["display"] = self.display
        self.namespace[stoa_transfer.LOAD_HELPER] = stoa_transfer.load
        self.stashed = []  # handles created by the current execution
        # The stream cells print to (fd 1); `echo` is the trailing expression's text, sent with the reply instead of
        # written there: the host appends it after the cell's output, and a short cell costs one write, not two.
        self.stdout = sys.stdout
        self.echo = None
        if HANDLE_DIR:
            limit = int(HANDLE_MAX_BYTES) if HANDLE_MAX_BYTES.isdigit() else 100 * 1024 * 1024
            self.namespace["stash"] = stoa_transfer.make_stash(HANDLE_DIR, limit, self.stashed.append)
        # Reference bootstrap: AGORA_OUTPUT_DIR as a global and agora_output(name) -> path inside it.
        output_dir = os.environ.get("AGORA_OUTPUT_DIR")
        if output_dir:
            self.namespace["AGORA_OUTPUT_DIR"] = output_dir

            def agora_output(name):
                """Path for a file in this session's output directory (listed as an artifact when written)."""
                return os.path.join(output_dir, name)

            self.namespace["agora_output"] = agora_output
        self.reply_fd = reply_fd
        self.commands_fd = commands_fd
        self.unread = b""  # what os.read gave beyond the last command line
        self.counter = 0
        self.tools = None  # stoa_tools.Runtime once tools are installed
        self.injected = {}  # helpers we put in the namespace; hidden from inspect

    def remember_injected(self):
        self.injected = dict((k, v) for k, v in self.namespace.items() if not k.startswith("_"))

    def display(self, *objs):
        """Show rich objects (PNG/SVG) in the activity feed; prints their text form."""
        for obj in objs:
            if not self.displays.add_object(obj):
                print(repr(obj))

    def send(self, cid, message):
        """One reply line (ASCII JSON: no raw newline); an oversized or unencodable reply becomes an error reply."""
        try:
            text = stoa_lean.dumps(message, allow_nan=False)
        except ValueError as exc:  # NaN / Infinity somewhere in a value: JSON cannot carry them
            text = stoa_lean.dumps({"ok": False, "error": "The kernel could not encode this step's result as JSON (%s)." % exc})
        if len(text) > MAX_REPLY_BYTES and "captured" in message:  # the cell's result without it, as a capture alone
            return self.send(cid, dict((k, v) for k, v in message.items() if k != "captured"))
        if len(text) > MAX_REPLY_BYTES:
            text = stoa_lean.dumps({"ok": False, "error": "This step's result is %d bytes, over the kernel's %d MiB reply limit; "
                               "return less (write large results to a file in AGORA_OUTPUT_DIR)." % (len(text), MAX_REPLY_BYTES >> 20)})
        view = memoryview(("%s %s\n" % (cid, text)).encode("ascii"))
        while view:
            view = view[os.write(self.reply_fd, view):]

    def next_command(self):
        """The next command line as bytes, without its newline; None when the host closed the pipe."""
        at = self.unread.find(b"\n")
        while at < 0:
            data = os.read(self.commands_fd, 65536)
            if not data:
                return None
            self.unread += data
            at = self.unread.find(b"\n")
        line, self.unread = self.unread[:at], self.unread[at + 1:]
        return line

    def compile_cell(self, code, tree=None):
        """The cell's body and its last expression (echoed), compiled; `tree` is `code` already parsed (by parse).
        A cell that is one expression (`df.head()`, `x + 1`) is compiled straight from its text when no tree is
        at hand: the parser's C tree, not Python's, and one compile instead of two."""
        self.counter += 1
        filename = "<cell-%d>" % self.counter
        if tree is None:
            try:
                return None, compile(code, filename, "eval")
            except (SyntaxError, ValueError, MemoryError, RecursionError):
                pass  # statements (or a problem the full parse below reports in its own words)
        try:
            if tree is None:
                tree = stoa_lean.parse(code, filename, "exec")
            last = None
            if tree.body and isinstance(tree.body[-1], _ast.Expr):
                last = _ast.Expression(tree.body.pop().value)
            body = compile(tree, filename, "exec")
            tail = compile(last, filename, "eval") if last is not None else None
        except (MemoryError, RecursionError) as exc:  # the parser's own bound; the kernel and its variables stay
            tree = last = None
            raise type(exc)("This cell is too large or too deeply nested for Python's parser. Nothing ran and the "
                            "session is unchanged; split the code into smaller cells, or load large data from a file.") from None
        return body, tail

    @staticmethod
    def parse(code):
        """The cell's syntax tree, parsed once for the code screen and the compile step; None when it does not parse
        (compile_cell parses again and reports why)."""
        try:
            return stoa_lean.parse(code)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return None

    def run(self, code, rewrite=None, tree=None):
        """One cell. `rewrite` maps asset/handle literals to files (stoa_transfer.rewrite_parts); the code screen
        has already seen the original code. `tree` is the original code parsed (used when nothing is rewritten)."""
        self.displays = Displays()
        del self.stashed[:]
        self.echo = None
        try:
            preamble, code = stoa_transfer.rewrite_parts(code, rewrite) if rewrite else ("", code)
        except Exception as exc:
            error = "Could not substitute the asset tags and handle ids in this code (%s: %s). Nothing ran.\n" % (
                type(exc).__name__, exc)
            sys.stderr.write(error)
            return False, error
        ok, error = True, None
        try:
            _user_call(self.run_cell, preamble, code, None if rewrite else tree)
        except BaseException as exc:  # noqa: B902 - user code may raise anything, SystemExit included
            ok = False
            error = self.format_exception(exc)
            sys.stderr.write(error)
        self.displays.capture_matplotlib()
        return ok, error

    def run_cell(self, preamble, code, tree=None):
        body, tail = self.compile_cell(code, tree)
        if preamble:  # binds the synthetic variables; loading a handle may run user __setstate__ code
            exec(compile(preamble, "<asset-and-handle-literals>", "exec"), self.namespace)
        if body is not None:
            exec(body, self.namespace)
        if tail is not None:
            value = eval(tail, self.namespace)
            if value is not None:
                self.namespace["_"] = value
                self.displays.add_object(value)
                text = repr(value) + "\n"
                if sys.stdout is self.stdout:
                    self.echo = text
                else:  # user code replaced sys.stdout: the echo goes where its prints go
                    sys.stdout.write(text)

    def install_tools(self, tools):
        try:
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            import stoa_tools
            sys.path.pop(0)
            self.tools = stoa_tools.install(self.namespace, tools)
            self.remember_injected()
            return True, None
        except Exception as exc:  # reported to the host, which fails the session start
            return False, "%s: %s" % (type(exc).__name__, exc)

    def capture(self, name):
        """A batch item's result variable: JSON if it serialises, else its repr, else missing."""
        if not name or name not in self.namespace:
            return {"kind": "missing"}
        value = self.namespace[name]
        try:
            return {"kind": "json", "value": stoa_lean.loads(stoa_lean.dumps(value, allow_nan=False))}
        except (TypeError, ValueError, OverflowError):
            pass
        try:
            return {"kind": "repr", "value": repr(value)}
        except Exception as exc:
            return {"kind": "repr", "value": "<repr failed: %s>" % type(exc).__name__}

    def inspect(self):
        """Public names of the namespace with type and clipped repr (user reprs may be interrupted)."""
        global _in_user_code
        out = {}
        try:
            _in_user_code = True
            for name, value in list(self.namespace.items()):
                if name.startswith("_") or self.injected.get(name) is value:
                    continue
                try:
                    text = repr(value)
                except Exception as exc:  # a broken __repr__ must not hide the rest
                    text = "<repr failed: %s>" % type(exc).__name__
                if len(text) > 300:
                    text = text[:300] + "...<truncated>"
                out[name] = {"type": type(value).__name__, "repr": text}
        except BaseException:
            out = None
        finally:
            _in_user_code = False
        return out

    def format_exception(self, exc):
        """The traceback as the user should see it: the user's frames only, never a driver or interpreter path."""
        import traceback  # only on errors: ~2 ms of every kernel start otherwise
        te = traceback.TracebackException(type(exc), exc, exc.__traceback__)
        _strip_driver_frames(te, set())
        return "".join(te.format())

    def screen(self, command, tree=None):
        """The reference's AST screen (agent guidance, not security): a rejection message or None."""
        options = command.get("screen")
        if not options:
            return None
        ok, message = stoa_screen.validate_code(command.get("code", ""), tuple(options.get("allowed_prefixes") or ("/tmp",)),
                                                tree=tree)
        return None if ok else message

    def flush_streams(self):
        """Everything the execution printed reaches fds 1 and 2 before the reply (the supervisor forwards it first)."""
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass

    def dump_variable(self, name, path, max_bytes=None):
        """Serialises a namespace variable to `path` for a transfer (the host reads the file, or the socket)."""
        if not name or name not in self.namespace:
            return {"ok": True, "value": {"found": False}}
        try:
            serializer, size = _user_call(stoa_transfer.dump, self.namespace[name], path, None, max_bytes)
        except stoa_transfer.TooLarge as exc:
            error = stoa_transfer.describe_dump_error(exc)
            return {"ok": False, "error": error,
                    "value": {"found": True, "error": error, "too_large": True, "size_bytes": exc.size}}
        except BaseException as exc:  # noqa: B902 - a user __reduce__ may raise anything
            error = stoa_transfer.describe_dump_error(exc)
            return {"ok": False, "error": error, "value": {"found": True, "error": error}}
        return {"ok": True, "value": {"found": True, "serializer": serializer, "size_bytes": size}}

    def load_variable(self, name, path, serializer):
        """Binds `name` to the object the host put in `path`; the error is the traceback text."""
        if not (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)):
            return {"ok": False, "error": "ValueError: invalid Python variable name: %r\n" % (name,)}
        try:
            self.namespace[name] = _user_call(stoa_transfer.load, path, serializer)
        except BaseException as exc:  # noqa: B902 - a user __setstate__ may raise anything
            return {"ok": False, "error": self.format_exception(exc)}
        return {"ok": True}

    def handle(self, command):
        """The reply fields of one result-producing op, or None for an unknown op."""
        op = command.get("op")
        if op == "exec":
            code = command.get("code", "")
            tree = self.parse(code) if command.get("screen") else None  # the screen and the compile share it
            screened = self.screen(command, tree)
            if screened:
                return {"ok": False, "error": screened, "rejected": True}
            if self.tools is not None:
                self.tools.begin(command.get("policy"))
            ok, error = self.run(code, command.get("rewrite"), tree)
            trace = self.tools.trace if self.tools is not None else None
            if self.tools is not None:
                self.tools.end()  # drops the trace's refs; the reply keeps the records
            reply = {"ok": ok, "error": error, "displays": self.displays.items, "stashed": list(self.stashed),
                     "tool_calls": trace.records if trace else [], "tool_calls_dropped": trace.dropped if trace else {},
                     "echo": self.echo}
            if ok and command.get("capture"):  # a batch item's result variable, without a second round trip
                try:
                    reply["captured"] = _user_call(self.capture, command["capture"])
                except Exception as exc:  # e.g. RecursionError in a deeply nested value: the cell's result stands
                    reply["captured"] = {"kind": "repr", "value": "<capture failed: %s>" % type(exc).__name__}
            return reply
        if op == "warm":
            # A pooled kernel runs the path of a cell once before it is handed out, so the first-touch costs (pages
            # shared with the supervisor since the fork, copied on first write) are paid while it waits: the
            # session's first cell then takes what any cell takes. Nothing of it stays in the namespace.
            counter = self.counter
            self.handle({"op": "exec", "code": "pass\nNone"})
            self.counter = counter
            return {"ok": True}
        if op == "install_tools":
            ok, error = self.install_tools(command.get("tools", []))
            return {"ok": ok, "error": error}
        if op == "inspect":
            value = self.inspect()
            return {"ok": value is not None, "value": value}
        if op == "literals":
            return {"ok": True, "value": stoa_transfer.find_literals(command.get("code", ""))}
        if op == "dump":
            max_bytes = command.get("max_bytes")
            return self.dump_variable(command.get("name"), command.get("path"),
                                      max_bytes if isinstance(max_bytes, int) and max_bytes >= 0 else None)
        if op == "load":
            return self.load_variable(command.get("name"), command.get("path"), command.get("serializer"))
        return {"ok": False, "error": "unknown driver op %r" % (op,)}

    def serve(self):
        self.remember_injected()
        self.send("ready", {"python": sys.version.split()[0]})
        while True:
            try:
                line = self.next_command()
            except KeyboardInterrupt:
                continue
            if line is None:
                os._exit(0)
            cid, _, body = line.partition(b" ")
            cid = cid.decode("ascii")
            command = stoa_lean.loads(body)
            if command.get("op") == "reap":
                _reap_strays()
                continue
            try:
                # A pooled kernel's session identity (USER_IDENTITY, STOA_SESSION_ID) comes with its first command.
                os.environ.update(command.get("identity") or {})
                reply = self.handle(command)
            except BaseException as exc:  # noqa: B902 - a driver step failed on this input: report it, keep serving
                reply = {"ok": False, "error": self.format_exception(exc)}
            self.flush_streams()
            self.send(cid, dict({"displays": []}, **reply))


def serve_user(commands_fd, reply_fd):
    """The user-code process (forked by stoa_supervisor): fd-level streams, SIGINT for user code, the namespace."""
    signal.signal(signal.SIGINT, _on_sigint)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", line_buffering=True)
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", line_buffering=True)
    sys.stdin = open(os.devnull, "r")
    Driver(commands_fd, reply_fd).serve()


if __name__ == "__main__":
    sys.path.insert(0, DRIVER_DIR)
    import stoa_supervisor  # noqa: E402 - beside this file
    sys.path.pop(0)
    stoa_supervisor.main(serve_user)
