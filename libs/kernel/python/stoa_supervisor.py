"""Stoa kernel supervisor: owns the host's pipes; user code runs in a child process that cannot reach them.

Stdlib only (Python >= 3.8). The host tells this process which commands will come on CMD_FD (one line each,
``<id> <token>``, several lines at a time, in the order it will send them) and sends interrupt requests on CTL_FD.
The user-code process (forked after the rlimits and the uid drop) has those fds and REPLY_FD closed: it gets each
command straight from the host as ``<token> <json>`` on USER_CMD_FD (a fresh random token per command, announced
here first, usually while the kernel is idle) and answers ``<token> <json>`` on a private pipe. Its fds 1 and 2 are
pipes to this process too, so everything the cell writes at the fd level (C extensions, child processes) comes here.

This process is the only writer of REPLY_FD, in frames of ``<kind:1 byte><length:4 bytes, big-endian><payload>``:
``o``/``e`` output bytes of fds 1/2, ``r`` a result (``{"reply":<the user process's JSON>,"id":<host id>}``),
``R`` ready, ``f`` a fault (``{"reason":…}``). A result is framed only after every byte the user process wrote to
fds 1 and 2 before answering has been framed: the output and the answer reach the host in order, in one write, so
nothing marks where a cell's output ends and nothing can be forged to end it early. Output while no answer is due is
held for HOLD_S (or up to HOLD_BYTES) and then forwarded, so the host is woken once per burst, not per line.

It is non-dumpable, so the user process (same uid, no capabilities) cannot open its /proc fds or read its memory. A
user-process message that does not answer the command due (the first announced one not answered yet), or a line
over MAX_LINE bytes, is a protocol fault: this process tells the host why, kills the user process and exits. When
the user process dies, this one forwards what it wrote and ends the same way (code or signal), so the host sees the
death as before.
"""
try:
    import _signal as signal  # signal.py wraps these in enums: it would import enum, functools and collections
except ImportError:  # an interpreter without it (not CPython)
    import signal
import ctypes
import gc
import os
import select
import struct
import sys
import time
from _collections import deque  # collections.py: ~1 ms of every kernel start for this one class

import stoa_lean  # json without its imports (re, enum, functools, collections)

CMD_FD = int(os.environ.pop("STOA_CMD_FD", "3"))
REPLY_FD = int(os.environ.pop("STOA_REPLY_FD", "4"))
CTL_FD = int(os.environ.pop("STOA_CTL_FD", "5"))
USER_CMD_FD = int(os.environ.pop("STOA_USER_CMD_FD", "6"))
# Largest line the user process may send (its driver keeps replies under stoa_driver.MAX_REPLY_BYTES).
MAX_LINE = 17 * 1024 * 1024
FAULT_EXIT = 70
PR_SET_PDEATHSIG, PR_SET_DUMPABLE = 1, 4
# Output with no answer due is forwarded after this long, or once this much is held.
HOLD_S = 0.002
HOLD_BYTES = 64 * 1024
HEADER = struct.Struct(">cI")
# What fds 1 and 2 can hold (Linux's default pipe size): at most this much was written but not yet read when the
# user process answers, since a writer blocks on a full pipe.
PIPE_BYTES = 64 * 1024


def _prctl(option, value):
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except Exception:
        pass


def confine():
    """Applies the host's rlimits, then drops to the kernel's own uid (root servers). Runs before any user code."""
    import resource
    limits = stoa_lean.loads(os.environ.pop("STOA_LIMITS", "{}") or "{}")
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


def _write_all(fd, data):
    written = os.write(fd, data)
    if written < len(data):  # a pipe write is whole unless a signal cut it short
        view = memoryview(data)[written:]
        while view:
            view = view[os.write(fd, view):]


def frame(kind, payload):
    return HEADER.pack(kind, len(payload)) + payload


class Lines(object):
    """Splits a byte stream into lines without copying a long line more than once; `size` is what is held."""

    def __init__(self):
        self.chunks = []
        self.size = 0

    def feed(self, data):
        lines = []
        at = data.find(b"\n")
        while at >= 0:
            self.chunks.append(data[:at])
            lines.append(b"".join(self.chunks))
            self.chunks, self.size = [], 0
            data = data[at + 1:]
            at = data.find(b"\n")
        if data:
            self.chunks.append(data)
            self.size += len(data)
        return lines


class Poller(object):
    """epoll where there is one (the fds are registered once, not on every wait), else poll; timeouts in ms."""

    def __init__(self):
        epoll = getattr(select, "epoll", None)
        self.impl = epoll() if epoll else select.poll()
        self.scale = 0.001 if epoll else 1

    def register(self, fd):
        self.impl.register(fd, select.EPOLLIN if self.scale != 1 else select.POLLIN)

    def unregister(self, fd):
        self.impl.unregister(fd)

    def poll(self, timeout_ms):
        return self.impl.poll(timeout_ms * self.scale)


class Supervisor(object):
    def __init__(self, child, from_child, outputs):
        self.child = child
        self.from_child = from_child
        self.outputs = outputs  # {fd: frame kind} of the user process's fds 1 and 2
        self.parent = os.getppid()
        self.pending = deque()  # (host id, token) of the announced commands not answered yet, oldest first
        self.ready = False
        self.commands = Lines()
        self.replies = Lines()
        self.held = []  # frames not yet written to the host
        self.held_bytes = 0
        self.deadline = None  # when held output must go out
        self.poller = Poller()

    def send(self, data=None):
        """Writes the held frames (and `data`) to the host in one write."""
        if self.held:
            if data is not None:
                self.held.append(data)
            data = b"".join(self.held)
            self.held, self.held_bytes, self.deadline = [], 0, None
        if data is not None:
            _write_all(REPLY_FD, data)

    def fault(self, reason):
        """The user process broke the protocol: tell the host why, end both processes."""
        try:
            self.send(frame(b"f", stoa_lean.dumps({"reason": reason}).encode("ascii")))
        finally:
            try:
                os.kill(self.child, signal.SIGKILL)
            finally:
                os._exit(FAULT_EXIT)

    def take(self, fd, limit):
        """Holds up to `limit` bytes of the user process's output on `fd`: the count, or -1 at its end (every writer
        closed it)."""
        try:
            data = os.read(fd, limit)
        except BlockingIOError:
            return 0
        if not data:
            self.poller.unregister(fd)
            del self.outputs[fd]
            os.close(fd)
            return -1
        self.held.append(frame(self.outputs[fd], data))
        self.held_bytes += len(data)
        if self.held_bytes >= HOLD_BYTES:
            self.send()
        elif self.deadline is None:
            self.deadline = time.monotonic() + HOLD_S
        return len(data)

    def drain(self, fd):
        """Takes in what `fd` holds, and at most a pipe's worth more: everything the user process wrote before its
        latest message (a child process writing on and on cannot keep this loop going)."""
        left = PIPE_BYTES
        while left > 0 and fd in self.outputs:
            got = self.take(fd, left)
            if got < left:  # a short read emptied the pipe (or it is at its end)
                return
            left -= got

    def drain_outputs(self):
        for fd in list(self.outputs):
            self.drain(fd)

    def on_command(self, line):
        cid, token = line.split(b" ", 1)
        self.pending.append((cid, token))

    def await_command(self):
        """A reply came before this process read the host's announcement (written first): read it now."""
        poller = select.poll()
        poller.register(CMD_FD, select.POLLIN)
        if poller.poll(1000):
            self.read_commands()

    def on_reply(self, line):
        cid, _, body = line.partition(b" ")
        if not self.ready:
            if cid != b"ready":
                self.fault("the kernel's first message was not its ready signal")
            self.ready = True
            self.send(frame(b"R", b"{}"))
            return
        if not self.pending:
            self.await_command()
        if not self.pending or cid != self.pending[0][1]:
            self.fault("user code wrote to the driver's reply channel (a message that answers no pending command)")
        pending_id = self.pending.popleft()[0]
        # The host's key comes last: JSON.parse keeps the last of duplicate keys, so no body can change it.
        self.send(b"".join((HEADER.pack(b"r", len(body) + len(pending_id) + 16), b'{"reply":', body, b',"id":',
                            pending_id, b"}")))

    def read_commands(self):
        try:
            data = os.read(CMD_FD, 65536)
        except BlockingIOError:  # taken already by await_command in this wake-up
            return
        if not data:  # the host closed the command pipe: it is gone or done with this kernel
            self.stop(0)
        for line in self.commands.feed(data):
            self.on_command(line)

    def read_replies(self):
        data = os.read(self.from_child, 65536)
        if not data:
            self.channel_closed()
        for line in self.replies.feed(data):
            self.on_reply(line)
        if self.replies.size > MAX_LINE:
            self.fault("user code wrote more than %d MiB without a newline to the driver's reply channel" % (MAX_LINE >> 20))

    def interrupt(self):
        try:
            data = os.read(CTL_FD, 64)
        except BlockingIOError:
            return
        if not data:
            self.stop(0)
        if b"i" in data:
            os.kill(self.child, signal.SIGINT)

    def wait_child(self, block=False):
        pid, status = os.waitpid(self.child, 0 if block else os.WNOHANG)
        if pid != self.child:
            return
        try:  # what it wrote before it ended still reaches the host
            self.drain_outputs()
            self.send()
        except OSError:
            pass
        if os.WIFSIGNALED(status):  # end the same way, so the host reports the same signal
            sig = os.WTERMSIG(status)
            if sig not in (signal.SIGKILL, signal.SIGSTOP):
                signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
            os._exit(128 + sig)
        os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)

    def channel_closed(self):
        """EOF on the reply pipe: the user process is exiting (wait for it) or user code closed the pipe."""
        for _ in range(200):
            self.wait_child()
            time.sleep(0.01)
        self.fault("user code closed the driver's reply channel")

    def stop(self, code):
        try:
            os.kill(self.child, signal.SIGKILL)
        finally:
            os._exit(code)

    def serve(self, wake):
        """The loop. Output is taken in before any message of the same wake-up: output written before a message is
        readable by the time the message is, so a result is framed after all of its cell's output."""
        handlers = {CMD_FD: self.read_commands, CTL_FD: self.interrupt, self.from_child: self.read_replies,
                    wake: lambda: (os.read(wake, 512), self.wait_child())}
        for fd in self.outputs:
            handlers[fd] = lambda fd=fd: self.drain(fd)
        for fd in handlers:
            self.poller.register(fd)
        order = {CMD_FD: 1, CTL_FD: 1, self.from_child: 2, wake: 3}
        while True:
            timeout = 1000 if self.deadline is None else max(0, int((self.deadline - time.monotonic()) * 1000) + 1)
            events = self.poller.poll(timeout)
            if not events:
                if self.deadline is not None:
                    self.send()
                elif os.getppid() != self.parent:
                    self.stop(1)  # the host (or bwrap) is gone
                continue
            if len(events) > 1:
                events.sort(key=lambda e: order.get(e[0], 0))  # output, then announcements, then answers
            for fd, _ in events:
                handlers[fd]()
            if self.deadline is not None and time.monotonic() >= self.deadline:
                self.send()


def main(serve_user):
    """Confines the process, then runs `serve_user(command_fd, reply_fd)` in a child it supervises."""
    confine()
    if os.environ.pop("STOA_PROBE", None):
        with open(os.path.join(os.getcwd(), ".stoa-probe"), "w") as f:
            f.write("ok")
        print(stoa_lean.dumps({"probe": "ok", "uid": os.getuid(), "pid": os.getpid()}))
        return
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    _prctl(PR_SET_DUMPABLE, 0)
    replies_r, replies_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    # What exists now (the interpreter, the driver's modules) is shared with the user process page for page: frozen,
    # so neither side's garbage collector writes to it (copy-on-write would make each side's copy private).
    gc.freeze()
    supervisor_pid = os.getpid()
    child = os.fork()
    if child == 0:
        try:
            for fd in (CMD_FD, REPLY_FD, CTL_FD, replies_r, out_r, err_r):
                os.close(fd)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            os.close(out_w)
            os.close(err_w)
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != supervisor_pid:
                os._exit(1)
            _prctl(PR_SET_DUMPABLE, 1)
            serve_user(USER_CMD_FD, replies_w)
            os._exit(0)
        except BaseException:  # noqa: B902 - a start-up failure of the driver: its traceback goes to the host's log
            import traceback
            traceback.print_exc()
            os._exit(1)
    for fd in (USER_CMD_FD, replies_w, out_w, err_w):
        os.close(fd)
    for fd in (out_r, err_r, CMD_FD, CTL_FD):  # a wake-up's stale event never blocks the loop
        os.set_blocking(fd, False)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    supervisor = Supervisor(child, replies_r, {out_r: b"o", err_r: b"e"})
    supervisor.wait_child()  # it may have died before the handler was in place
    supervisor.serve(wake_r)


if __name__ == "__main__":
    sys.exit("stoa_supervisor is started by stoa_driver.py")
