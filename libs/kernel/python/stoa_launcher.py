"""Stoa kernel launcher: starts kernel processes for the host, so the host never forks itself.

Stdlib only (Python >= 3.8), host side (it never runs inside a sandbox). A Node.js process spawns a child by forking
itself, and on the machines Stoa runs on that stalls its event loop for 10-20 ms per kernel, every new session and
every batch item. This small process forks instead (well under a millisecond) and hands the kernel's descriptors to
the host over the unix socket given as argv[1] (in a private 0700 directory of the host; argv[2] is the host's pid):

- stdin: one JSON request per line, ``{"t": token, "file", "args", "cwd", "env", "uid"?, "gid"?}``. For each, this
  process connects five sockets, each opening with the 32-character token and a role letter: ``o`` (the kernel's
  fds 1 and 2), ``c`` (fd 3, commands), ``r`` (fd 4, replies), ``k`` (fd 5, control), ``u`` (fd 6, user commands).
  Each is shut down the way the kernel must not use it (a kernel reads nothing from ``o``/``r`` and writes nothing to
  ``c``/``k``/``u``), then the kernel starts in a session of its own with exactly those fds.
- stdout: one JSON line per event, ``{"t", "pid"}`` once it runs, ``{"t", "error"}`` when it could not start,
  ``{"t", "exit", "signal"}`` once it is reaped.
- EOF on stdin (the host is gone or closing): every kernel's process group is killed and this process exits. It dies
  with the host too (PR_SET_PDEATHSIG), and the kernels with it (bubblewrap's --die-with-parent, the supervisor's
  own death signal).

Before it serves, it writes the bytecode of the modules every kernel imports (``precompile``): a kernel cannot write
``__pycache__`` itself (its own uid, a read-only view), so it would compile them again on every start.
"""
import ctypes
import errno
import json
import os
import selectors
import signal
import socket
import subprocess
import sys

ROLES = ("o", "c", "r", "k", "u")
KERNEL_FDS = {"c": 3, "r": 4, "k": 5, "u": 6}
READ_ONLY = ("c", "k", "u")  # the kernel only reads these
PR_SET_PDEATHSIG = 1
# What a kernel imports from this directory (stoa_driver.py runs as the script: Python never caches a script).
KERNEL_MODULES = ("stoa_supervisor", "stoa_lean", "stoa_screen", "stoa_transfer", "stoa_display", "stoa_tools")


def _send(message):
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(1, data):]


def _reserve_kernel_fds():
    """Keeps fds 3-6 on /dev/null, so no socket of this process lands there before it is placed."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in KERNEL_FDS.values():
        if fd != null:
            os.dup2(null, fd, inheritable=False)
    if null not in KERNEL_FDS.values():
        os.close(null)


class Launcher(object):
    def __init__(self, path):
        self.path = path
        self.kernels = {}  # pid -> (token, Popen)

    def connect(self, token, role):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.path)
        s.sendall((token + role).encode())
        s.shutdown(socket.SHUT_WR if role in READ_ONLY else socket.SHUT_RD)
        return s

    def launch(self, request):
        token = request.get("t")
        socks = {}
        try:
            try:
                for role in ROLES:
                    socks[role] = self.connect(token, role)
            except OSError as e:
                _send({"t": token, "error": "the launcher could not connect to the server's socket %s (%s)"
                       % (self.path, e.strerror or e)})
                return
            for role, fd in KERNEL_FDS.items():
                os.dup2(socks[role].fileno(), fd, inheritable=False)
            proc = subprocess.Popen(
                [request["file"]] + list(request["args"]),
                stdin=subprocess.DEVNULL, stdout=socks["o"], stderr=socks["o"],
                pass_fds=tuple(KERNEL_FDS.values()), cwd=request["cwd"], env=request["env"],
                start_new_session=True, **_identity(request.get("uid"), request.get("gid")))
        except OSError as e:
            _send({"t": token, "error": "spawn %s %s: %s" % (request.get("file"), _errname(e), e.strerror or e)})
            return
        except Exception as e:  # noqa: B902 - a bad request (a NUL in an argument, a failed uid drop) fails this start only
            _send({"t": token, "error": "spawn %s failed: %s: %s" % (request.get("file"), type(e).__name__, e)})
            return
        finally:
            for s in socks.values():
                s.close()
            _reserve_kernel_fds()
        self.kernels[proc.pid] = (token, proc)
        _send({"t": token, "pid": proc.pid})

    def reap(self):
        while self.kernels:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            known = self.kernels.pop(pid, None)
            if known is None:
                continue
            token, proc = known
            proc.returncode = status  # reaped here: the Popen object must not wait for it again
            if os.WIFSIGNALED(status):
                sig = os.WTERMSIG(status)
                try:
                    name = signal.Signals(sig).name
                except ValueError:
                    name = "SIG%d" % sig
                _send({"t": token, "exit": None, "signal": name})
            else:
                _send({"t": token, "exit": os.WEXITSTATUS(status), "signal": None})

    def kill_all(self):
        for pid in list(self.kernels):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass


def _identity(uid, gid):
    """Popen arguments that start the kernel as uid:gid with no supplementary groups (as Node's spawn did)."""
    if uid is None and gid is None:
        return {}
    if sys.version_info >= (3, 9):
        return {"user": uid, "group": gid, "extra_groups": []}
    return {"preexec_fn": lambda: _drop(uid, gid)}


def _drop(uid, gid):
    os.setgroups([])
    if gid is not None:
        os.setresgid(gid, gid, gid)
    if uid is not None:
        os.setresuid(uid, uid, uid)


def precompile(directory=None):
    """Writes the bytecode of KERNEL_MODULES beside them (``__pycache__``) where it is missing or stale; returns the
    modules written. Compiling them cost each kernel start ~9 ms of CPU on the project's machine. Best effort: a
    read-only install (an image built without it) only makes kernels compile."""
    import compileall
    import contextlib
    from importlib.util import cache_from_source
    directory = directory or os.path.dirname(os.path.abspath(__file__))
    written = []
    umask = os.umask(0o022)  # readable by the kernels' uids whatever the server's umask (the sources' modes apply)
    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout is the host's channel
            for name in KERNEL_MODULES:
                source = os.path.join(directory, name + ".py")
                before = _mtime(cache_from_source(source))
                try:
                    if compileall.compile_file(source, quiet=2) and _mtime(cache_from_source(source)) != before:
                        written.append(name)
                except Exception:  # noqa: B902 - best effort: the kernel compiles what is missing
                    pass
    finally:
        os.umask(umask)
    return written


def _mtime(path):
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _errname(e):
    return errno.errorcode.get(e.errno, "E?") if e.errno else type(e).__name__


def main():
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except Exception:
        pass
    if os.getppid() != int(sys.argv[2]):
        return 1  # the host died before the death signal was set
    precompile()
    _reserve_kernel_fds()
    launcher = Launcher(sys.argv[1])
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ, "requests")
    selector.register(wake_r, selectors.EVENT_READ, "signals")
    pending = b""
    try:
        while True:
            for key, _ in selector.select():
                if key.data == "signals":
                    os.read(wake_r, 4096)  # SIGCHLD: reaped below
                    continue
                data = os.read(0, 1 << 20)
                if not data:
                    return 0
                lines = (pending + data).split(b"\n")
                pending = lines.pop()
                for line in lines:
                    try:
                        request = json.loads(line) if line.strip() else None
                    except ValueError:
                        sys.stderr.write("stoa_launcher: unreadable request ignored\n")
                        continue
                    if isinstance(request, dict):
                        launcher.launch(request)
            launcher.reap()
    finally:
        launcher.kill_all()


if __name__ == "__main__":
    sys.exit(main())
