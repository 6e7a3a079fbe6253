"""Stoa kernel driver: one persistent Python namespace driven over dedicated pipes.

Stdlib only (Python >= 3.8). Node writes JSON-line commands to fd CMD_FD and reads JSON-line replies
from fd REPLY_FD; the user's stdout/stderr stay on fds 1 and 2 so fd-level output (C extensions,
os.write, child processes) is captured by the host. Each execution ends with a nonce marker written to
both fd 1 and fd 2 so the host knows every byte of that execution has arrived.
"""
import ast
import ctypes
import io
import json
import keyword
import os
import signal
import sys
import threading
import traceback
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stoa_transfer  # noqa: E402 - beside this file
from stoa_display import Displays  # noqa: E402
sys.path.pop(0)

CMD_FD = int(os.environ.pop("STOA_CMD_FD", "3"))
REPLY_FD = int(os.environ.pop("STOA_REPLY_FD", "4"))
CTL_FD = int(os.environ.pop("STOA_CTL_FD", "5"))
REAP_STRAYS = os.environ.pop("STOA_REAP_STRAYS", "") == "1"
HANDLE_DIR = os.environ.pop("STOA_HANDLE_DIR", "")
HANDLE_MAX_BYTES = os.environ.pop("STOA_HANDLE_MAX_BYTES", "")

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


def _confine():
    """Applies the host's rlimits, then drops to the kernel's own uid (root servers). Runs before any user code."""
    import resource
    limits = json.loads(os.environ.pop("STOA_LIMITS", "{}") or "{}")
    names = {"as": resource.RLIMIT_AS, "nproc": resource.RLIMIT_NPROC,
             "fsize": resource.RLIMIT_FSIZE, "nofile": resource.RLIMIT_NOFILE}
    for key, value in limits.items():
        if key in names and value:
            resource.setrlimit(names[key], (int(value), int(value)))
    uid = os.environ.pop("STOA_DROP_UID", None)
    gid = os.environ.pop("STOA_DROP_GID", None)
    if uid is not None:
        os.setgroups([])
        os.setresgid(int(gid or uid), int(gid or uid), int(gid or uid))
        os.setresuid(int(uid), int(uid), int(uid))
        if os.getuid() == 0 or os.geteuid() == 0:
            raise SystemExit("stoa: could not drop root privileges")
    os.umask(0o077)


def _watch_interrupts():
    """The host asks for a KeyboardInterrupt by writing to the control pipe (signals cannot cross bwrap)."""
    def watch():
        while True:
            try:
                data = os.read(CTL_FD, 64)
            except OSError:
                return
            if not data:
                return
            if b"i" in data:
                os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=watch, name="stoa-interrupts", daemon=True).start()


def _reap_strays():
    """After a timeout: end what the cell left running (fork bombs, busy children). Only where the kernel has
    its own pid namespace or uid, so kill(-1) reaches nothing outside this kernel."""
    import time
    if not REAP_STRAYS:
        return
    for _ in range(200):
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:  # ESRCH: nothing left to signal
            break
        while True:
            try:
                pid, _status = os.waitpid(-1, os.WNOHANG)
            except OSError:
                break
            if pid == 0:
                break
        time.sleep(0.005)


def _die_with_parent():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass
    parent = os.getppid()

    def watch():
        import time
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                try:
                    os.killpg(0, signal.SIGKILL)
                finally:
                    os._exit(1)

    threading.Thread(target=watch, name="stoa-parent-watch", daemon=True).start()


class Driver(object):
    def __init__(self):
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
        self.reply = os.fdopen(REPLY_FD, "w", buffering=1, encoding="utf-8", closefd=False)
        self.commands = os.fdopen(CMD_FD, "r", encoding="utf-8", closefd=False)
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

    def send(self, message):
        self.reply.write(json.dumps(message) + "\n")
        self.reply.flush()

    def compile_cell(self, code):
        self.counter += 1
        filename = "<cell-%d>" % self.counter
        tree = ast.parse(code, filename, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        body = compile(tree, filename, "exec")
        tail = compile(last, filename, "eval") if last is not None else None
        return body, tail

    def run(self, code, rewrite=None):
        """One cell. `rewrite` maps asset/handle literals to files (stoa_transfer.rewrite_parts); the code screen
        has already seen the original code."""
        self.displays = Displays()
        del self.stashed[:]
        try:
            preamble, code = stoa_transfer.rewrite_parts(code, rewrite) if rewrite else ("", code)
        except Exception as exc:
            error = "Could not substitute the asset tags and handle ids in this code (%s: %s). Nothing ran.\n" % (
                type(exc).__name__, exc)
            sys.stderr.write(error)
            return False, error
        ok, error = True, None
        try:
            _user_call(self.run_cell, preamble, code)
        except BaseException as exc:  # noqa: B902 - user code may raise anything, SystemExit included
            ok = False
            error = self.format_exception(exc)
            sys.stderr.write(error)
        self.displays.capture_matplotlib()
        return ok, error

    def run_cell(self, preamble, code):
        body, tail = self.compile_cell(code)
        if preamble:  # binds the synthetic variables; loading a handle may run user __setstate__ code
            exec(compile(preamble, "<asset-and-handle-literals>", "exec"), self.namespace)
        exec(body, self.namespace)
        if tail is not None:
            value = eval(tail, self.namespace)
            if value is not None:
                self.namespace["_"] = value
                self.displays.add_object(value)
                sys.stdout.write(repr(value) + "\n")

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
            return {"kind": "json", "value": json.loads(json.dumps(value))}
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
        lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
        # Hide the driver's own frame so tracebacks start at the user's cell.
        kept = [line for line in lines if "stoa_driver.py" not in line and "stoa_transfer.py" not in line]
        return "".join(kept)

    def screen(self, command):
        """The reference's AST screen (agent guidance, not security): a rejection message or None."""
        options = command.get("screen")
        if not options:
            return None
        try:
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            import stoa_screen
        finally:
            sys.path.pop(0)
        ok, message = stoa_screen.validate_code(command.get("code", ""), tuple(options.get("allowed_prefixes") or ("/tmp",)))
        return None if ok else message

    def flush_streams(self, nonce):
        marker = "\x00STOA:%s\x00\n" % nonce
        for stream, fd in ((sys.stdout, 1), (sys.stderr, 2)):
            try:
                stream.flush()
            except Exception:
                pass
            os.write(fd, marker.encode("utf-8"))

    def dump_variable(self, name, path):
        """Serialises a namespace variable to `path` for a transfer (the host reads the file)."""
        if not name or name not in self.namespace:
            return {"ok": True, "value": {"found": False}}
        try:
            serializer, size = _user_call(stoa_transfer.dump, self.namespace[name], path)
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
            screened = self.screen(command)
            if screened:
                return {"ok": False, "error": screened, "rejected": True}
            if self.tools is not None:
                self.tools.begin(command.get("policy"))
            ok, error = self.run(command.get("code", ""), command.get("rewrite"))
            trace = self.tools.trace if self.tools is not None else None
            if self.tools is not None:
                self.tools.end()  # drops the trace's refs; the reply keeps the records
            return {"ok": ok, "error": error, "displays": self.displays.items, "stashed": list(self.stashed),
                    "tool_calls": trace.records if trace else [], "tool_calls_dropped": trace.dropped if trace else {}}
        if op == "install_tools":
            ok, error = self.install_tools(command.get("tools", []))
            return {"ok": ok, "error": error}
        if op == "capture":
            return {"ok": True, "value": self.capture(command.get("name", ""))}
        if op == "inspect":
            value = self.inspect()
            return {"ok": value is not None, "value": value}
        if op == "assign":
            os.environ.update(command.get("env") or {})
            return {"ok": True}
        if op == "literals":
            return {"ok": True, "value": stoa_transfer.find_literals(command.get("code", ""))}
        if op == "dump":
            return self.dump_variable(command.get("name"), command.get("path"))
        if op == "load":
            return self.load_variable(command.get("name"), command.get("path"), command.get("serializer"))
        return None

    def serve(self):
        self.remember_injected()
        self.send({"type": "ready", "pid": os.getpid(), "python": sys.version.split()[0]})
        while True:
            try:
                line = self.commands.readline()
            except KeyboardInterrupt:
                continue
            if not line:
                os._exit(0)
            try:
                command = json.loads(line)
            except ValueError:
                continue
            op = command.get("op")
            if op == "reap":
                _reap_strays()
            elif op == "ping":
                self.send({"type": "pong", "id": command.get("id")})
            else:
                reply = self.handle(command)
                if reply is None:
                    continue
                self.flush_streams(command["nonce"])
                self.send(dict({"type": "result", "id": command["id"], "displays": []}, **reply))


def main():
    _confine()
    if os.environ.pop("STOA_PROBE", None):
        with open(os.path.join(os.getcwd(), ".stoa-probe"), "w") as f:
            f.write("ok")
        print(json.dumps({"probe": "ok", "uid": os.getuid(), "pid": os.getpid()}))
        return
    signal.signal(signal.SIGINT, _on_sigint)
    _die_with_parent()
    _watch_interrupts()
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", line_buffering=True)
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", line_buffering=True)
    sys.stdin = open(os.devnull, "r")
    Driver().serve()


if __name__ == "__main__":
    main()
