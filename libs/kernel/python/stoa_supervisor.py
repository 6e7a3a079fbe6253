"""Stoa kernel supervisor: owns the host's pipes; user code runs in a child process that cannot reach them.

Stdlib only (Python >= 3.8). The host tells this process which command is pending on CMD_FD (one line each,
``<id> <nonce> <token>``), takes replies on REPLY_FD (JSON lines) and sends interrupt requests on CTL_FD. The
user-code process (forked after the rlimits and the uid drop) has those three fds closed and never sees a nonce;
it gets each command straight from the host as ``<token> <json>`` on USER_CMD_FD (a fresh random token per
command; the host writes the pending line first, usually while the kernel is idle before that command) and
answers ``<token> <json>`` on a private pipe. This process frames every reply for the host itself and writes the
end-of-execution markers (``\\0STOA:<nonce>\\0\\n``) to fds 1 and 2, which it shares with the user process, only
after that process answered: user code can neither write on the host's channels nor fake a marker. It is
non-dumpable, so the user process (same uid, no capabilities) cannot open its /proc fds or read its memory. A
user-process message that does not answer the pending command, or a line over MAX_LINE bytes, is a protocol
fault: this process tells the host why, kills the user process and exits. When the user process dies, this one
ends the same way (code or signal), so the host sees the death as before.
"""
import ctypes
import gc
import json
import os
import select
import signal
import sys
import time

CMD_FD = int(os.environ.pop("STOA_CMD_FD", "3"))
REPLY_FD = int(os.environ.pop("STOA_REPLY_FD", "4"))
CTL_FD = int(os.environ.pop("STOA_CTL_FD", "5"))
USER_CMD_FD = int(os.environ.pop("STOA_USER_CMD_FD", "6"))
# Largest line the user process may send (its driver keeps replies under stoa_driver.MAX_REPLY_BYTES).
MAX_LINE = 17 * 1024 * 1024
FAULT_EXIT = 70
PR_SET_PDEATHSIG, PR_SET_DUMPABLE = 1, 4


def _prctl(option, value):
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except Exception:
        pass


def confine():
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


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


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


class Supervisor(object):
    def __init__(self, child, from_child):
        self.child = child
        self.from_child = from_child
        self.parent = os.getppid()
        self.pending = None  # (host id, nonce, token) of the command the user process owes a reply
        self.ready = False
        self.commands = Lines()
        self.replies = Lines()

    def fault(self, reason):
        """The user process broke the protocol: tell the host why, end both processes."""
        try:
            _write_all(REPLY_FD, (json.dumps({"type": "fault", "reason": reason}) + "\n").encode("ascii"))
        finally:
            try:
                os.kill(self.child, signal.SIGKILL)
            finally:
                os._exit(FAULT_EXIT)

    def on_command(self, line):
        cid, nonce, token = line.split(b" ", 2)
        self.pending = (cid, nonce, token)

    def await_command(self):
        """A reply came before this process read the host's pending line (written first): read it now."""
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
            _write_all(REPLY_FD, b'{"type":"ready"}\n')
            return
        if self.pending is None:
            self.await_command()
        if self.pending is None or cid != self.pending[2]:
            self.fault("user code wrote to the driver's reply channel (a message that answers no pending command)")
        pending_id, nonce, _token = self.pending
        self.pending = None
        marker = b"\x00STOA:" + nonce + b"\x00\n"
        os.write(1, marker)
        os.write(2, marker)
        # The host's keys come last: JSON.parse keeps the last of duplicate keys, so no body can change them.
        _write_all(REPLY_FD, b'{"reply":' + body + b',"type":"result","id":' + pending_id + b"}\n")

    def read_commands(self):
        data = os.read(CMD_FD, 65536)
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
        data = os.read(CTL_FD, 64)
        if not data:
            self.stop(0)
        if b"i" in data:
            os.kill(self.child, signal.SIGINT)

    def wait_child(self, block=False):
        pid, status = os.waitpid(self.child, 0 if block else os.WNOHANG)
        if pid != self.child:
            return
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
        poller = select.poll()
        handlers = {CMD_FD: self.read_commands, CTL_FD: self.interrupt, self.from_child: self.read_replies,
                    wake: lambda: (os.read(wake, 512), self.wait_child())}
        for fd in handlers:
            poller.register(fd, select.POLLIN)
        while True:
            events = poller.poll(1000)
            if not events and os.getppid() != self.parent:
                self.stop(1)  # the host (or bwrap) is gone
            for fd, _ in events:
                handlers[fd]()


def main(serve_user):
    """Confines the process, then runs `serve_user(command_fd, reply_fd)` in a child it supervises."""
    confine()
    if os.environ.pop("STOA_PROBE", None):
        with open(os.path.join(os.getcwd(), ".stoa-probe"), "w") as f:
            f.write("ok")
        print(json.dumps({"probe": "ok", "uid": os.getuid(), "pid": os.getpid()}))
        return
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    _prctl(PR_SET_DUMPABLE, 0)
    replies_r, replies_w = os.pipe()
    gc.freeze()  # the user process shares these pages; keep this side from touching them
    supervisor_pid = os.getpid()
    child = os.fork()
    if child == 0:
        try:
            for fd in (CMD_FD, REPLY_FD, CTL_FD, replies_r):
                os.close(fd)
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != supervisor_pid:
                os._exit(1)
            _prctl(PR_SET_DUMPABLE, 1)
            gc.unfreeze()
            serve_user(USER_CMD_FD, replies_w)
            os._exit(0)
        except BaseException:  # noqa: B902 - a start-up failure of the driver: its traceback goes to the host's log
            import traceback
            traceback.print_exc()
            os._exit(1)
    os.close(USER_CMD_FD)
    os.close(replies_w)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    supervisor = Supervisor(child, replies_r)
    supervisor.wait_child()  # it may have died before the handler was in place
    supervisor.serve(wake_r)


if __name__ == "__main__":
    sys.exit("stoa_supervisor is started by stoa_driver.py")
