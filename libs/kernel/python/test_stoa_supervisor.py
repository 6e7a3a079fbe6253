"""Tests for stoa_supervisor: its framing of output and answers, and its loop's order within one wake-up. Run:
python3 -m unittest discover -s libs/kernel/python -p 'test_stoa_supervisor.py'

Each test starts a real supervisor (stoa_supervisor.main) in a subprocess, on socketpairs in place of the host's
fds 3-6, with a stand-in for the driver as its user process: it says ready, then answers each command with
``{"ok": true}`` after printing the command's text on fd 1.
"""
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))

USER_PROCESS = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
import stoa_supervisor

def serve_user(commands_fd, reply_fd):
    os.write(reply_fd, b"ready {}\n")
    buf = b""
    while True:
        data = os.read(commands_fd, 65536)
        if not data:
            os._exit(0)
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            token, _, body = line.partition(b" ")
            os.write(1, body + b"\n")
            os.write(reply_fd, token + b' {"ok": true}\n')

stoa_supervisor.main(serve_user)
"""


class Kernel(object):
    """A supervisor and its stand-in user process, with the host's ends of their fds."""

    def __init__(self):
        pairs = [socket.socketpair() for _ in range(4)]  # commands, replies, control, user commands
        self.host = [a for a, _ in pairs]
        theirs = [b for _, b in pairs]
        env = dict(os.environ, STOA_CMD_FD=str(theirs[0].fileno()), STOA_REPLY_FD=str(theirs[1].fileno()),
                   STOA_CTL_FD=str(theirs[2].fileno()), STOA_USER_CMD_FD=str(theirs[3].fileno()))
        self.proc = subprocess.Popen([sys.executable, "-c", USER_PROCESS, HERE], env=env,
                                     pass_fds=[s.fileno() for s in theirs])
        for s in theirs:
            s.close()
        self.buf = b""

    def announce(self, *lines):
        self.host[0].sendall(b"".join(b"%d %s\n" % (i, t) for i, t in lines))

    def command(self, token, text):
        self.host[3].sendall(token + b" " + text + b"\n")

    def frames(self, until, timeout=3.0):
        """Frames read until one of kind `until`: [(kind, payload)]."""
        out = []
        deadline = time.monotonic() + timeout
        while True:
            while len(self.buf) >= 5:
                kind, length = struct.unpack(">cI", self.buf[:5])
                if len(self.buf) < 5 + length:
                    break
                out.append((kind, self.buf[5:5 + length]))
                self.buf = self.buf[5 + length:]
                if kind == until:
                    return out
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.host[1]], [], [], left)[0]:
                raise AssertionError("no %r frame within %.1fs; got %r" % (until, timeout, out))
            data = self.host[1].recv(65536)
            if not data:
                raise AssertionError("the supervisor closed its reply pipe; got %r" % (out,))
            self.buf += data

    def close(self):
        self.proc.kill()
        self.proc.wait()
        for s in self.host:
            s.close()


class SupervisorTest(unittest.TestCase):
    def setUp(self):
        self.kernel = Kernel()
        self.assertEqual(self.kernel.frames(b"R")[-1], (b"R", b"{}"))

    def tearDown(self):
        self.kernel.close()

    def test_frames_the_output_of_a_command_ahead_of_its_answer(self):
        self.kernel.announce((1, b"t1"), (2, b"t2"))
        self.kernel.command(b"t1", b"first")
        frames = self.kernel.frames(b"r")
        self.assertEqual(b"".join(p for k, p in frames if k == b"o"), b"first\n")
        self.assertEqual(json.loads(frames[-1][1].decode()), {"reply": {"ok": True}, "id": 1})
        self.kernel.command(b"t2", b"second")
        self.assertEqual(json.loads(self.kernel.frames(b"r")[-1][1].decode())["id"], 2)

    def test_an_answer_read_in_the_same_wake_up_as_its_announcement_is_taken(self):
        # The host announces before it sends; here the answer is in the supervisor's pipe first, and both are
        # readable when it wakes: it must take the announcement, then the answer, and never block on either.
        os.kill(self.kernel.proc.pid, signal.SIGSTOP)
        try:
            self.kernel.command(b"t1", b"early")
            time.sleep(0.2)  # the user process answers while the supervisor is stopped
            self.kernel.announce((1, b"t1"))
        finally:
            os.kill(self.kernel.proc.pid, signal.SIGCONT)
        self.assertEqual(json.loads(self.kernel.frames(b"r")[-1][1].decode())["id"], 1)
        self.kernel.announce((2, b"t2"))
        self.kernel.command(b"t2", b"next")
        self.assertEqual(json.loads(self.kernel.frames(b"r")[-1][1].decode())["id"], 2)

    def test_answers_a_command_sent_right_after_ready_every_time(self):
        # What the host does with a new kernel: announce a batch and send the first command at once. The announcement
        # and the answer then often land in one wake-up of the supervisor, in either order.
        for i in range(40):
            kernel = self.kernel if i == 0 else Kernel()
            try:
                if i:
                    kernel.frames(b"R")
                kernel.announce(*[(n, b"t%d" % n) for n in range(1, 17)])
                kernel.command(b"t1", b"go")
                self.assertEqual(json.loads(kernel.frames(b"r")[-1][1].decode())["id"], 1, "kernel %d" % i)
            finally:
                if i:
                    kernel.close()

    def test_an_answer_to_no_announced_command_is_a_fault(self):
        self.kernel.announce((1, b"t1"))
        self.kernel.command(b"forged", b"x")
        frames = self.kernel.frames(b"f", timeout=5.0)
        self.assertIn(b"answers no pending command", frames[-1][1])
        self.assertEqual(self.kernel.proc.wait(5), 70)


if __name__ == "__main__":
    unittest.main()
