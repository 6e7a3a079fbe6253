"""Tests for stoa_launcher.precompile: the bytecode of the kernel's modules, written once by the server's launcher so
kernels (which cannot write __pycache__) do not compile them on every start; and for what a kernel start imports. Run:
python3 -m unittest discover -s libs/kernel/python -p 'test_stoa_launcher.py'

The precompile tests work on copies of the real modules in a temporary directory, never on the source tree; the
import test reads the sources in place and writes nothing (-B).
"""
import importlib.util
import io
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stoa_launcher  # noqa: E402 - beside this file
sys.path.pop(0)


def _copy_modules(directory):
    for name in stoa_launcher.KERNEL_MODULES:
        shutil.copy(os.path.join(HERE, name + ".py"), directory)


def _valid_pyc(source):
    """True when the cached file is what the import system would load for `source` (magic, flags, mtime, size)."""
    with open(importlib.util.cache_from_source(source), "rb") as f:
        header = f.read(16)
    st = os.stat(source)
    return (header[:4] == importlib.util.MAGIC_NUMBER and int.from_bytes(header[4:8], "little") == 0
            and int.from_bytes(header[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF
            and int.from_bytes(header[12:16], "little") == st.st_size & 0xFFFFFFFF)


class PrecompileTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        _copy_modules(self.dir)

    def test_writes_valid_bytecode_for_every_kernel_module_then_only_what_changed(self):
        self.assertEqual(stoa_launcher.precompile(self.dir), list(stoa_launcher.KERNEL_MODULES))
        for name in stoa_launcher.KERNEL_MODULES:
            self.assertTrue(_valid_pyc(os.path.join(self.dir, name + ".py")), name)
        self.assertEqual(stoa_launcher.precompile(self.dir), [])  # up to date: nothing rewritten
        source = os.path.join(self.dir, "stoa_display.py")
        with open(source, "a") as f:
            f.write("\n# changed\n")
        os.utime(source, (1, 1))  # a different mtime even within the same second
        self.assertEqual(stoa_launcher.precompile(self.dir), ["stoa_display"])
        self.assertTrue(_valid_pyc(source))

    def test_a_kernel_importing_the_modules_loads_them_without_compiling(self):
        stoa_launcher.precompile(self.dir)
        # A read-only view as a kernel has (no writes possible): every module comes from __pycache__, no compile runs.
        code = ("import sys; compiled = []\n"
                "sys.addaudithook(lambda e, a: e == 'compile' and compiled.append(a[1]))\n"
                "sys.path.insert(0, sys.argv[1])\n"
                "import %s\n"
                "print([c for c in compiled if isinstance(c, str) and c.endswith('.py')])"
                % ", ".join(stoa_launcher.KERNEL_MODULES))
        out = subprocess.run([sys.executable, "-I", "-B", "-c", code, self.dir], capture_output=True, text=True,
                             check=True).stdout
        self.assertEqual(out.strip(), "[]")
        shutil.rmtree(os.path.join(self.dir, "__pycache__"))
        out = subprocess.run([sys.executable, "-I", "-B", "-c", code, self.dir], capture_output=True, text=True,
                             check=True).stdout
        self.assertIn("stoa_screen.py", out)  # the check above can fail: without the cache each module compiles

    def test_the_cache_is_readable_by_others_whatever_the_servers_umask(self):
        os.chmod(self.dir, 0o755)
        old = os.umask(0o077)
        try:
            stoa_launcher.precompile(self.dir)
        finally:
            os.umask(old)
        cache = os.path.join(self.dir, "__pycache__")
        self.assertEqual(stat.S_IMODE(os.stat(cache).st_mode), 0o755)
        for entry in os.listdir(cache):
            self.assertTrue(os.stat(os.path.join(cache, entry)).st_mode & stat.S_IROTH, entry)

    def test_never_writes_to_stdout_and_never_raises(self):
        with open(os.path.join(self.dir, "stoa_tools.py"), "w") as f:
            f.write("def broken(:\n")
        out = io.StringIO()
        with redirect_stdout(out):
            written = stoa_launcher.precompile(self.dir)
        self.assertEqual(out.getvalue(), "")  # stdout is the host's channel
        self.assertNotIn("stoa_tools", written)
        self.assertIn("stoa_screen", written)
        # A directory where __pycache__ cannot be made (a file is in its place): nothing written, no exception.
        other = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, other)
        _copy_modules(other)
        open(os.path.join(other, "__pycache__"), "w").close()
        with redirect_stdout(out):
            self.assertEqual(stoa_launcher.precompile(other), [])
        self.assertEqual(out.getvalue(), "")


class KernelStartImportsTest(unittest.TestCase):
    def test_a_kernel_start_leaves_what_only_errors_pictures_and_user_code_need_unimported(self):
        # Every kernel start imports the driver and the supervisor. traceback (~2 ms of CPU with its linecache and
        # tokenize) is needed when a cell fails, base64 (~1.5 ms) when it shows a PNG: they are imported then.
        # json and ast (with re, enum, functools, collections, contextlib: a third of a kernel's start) are
        # replaced by stoa_lean on their C halves; user code that imports them gets the real ones.
        code = ("import sys; sys.path.insert(0, sys.argv[1])\n"
                "import stoa_driver, stoa_supervisor\n"
                "print(sorted(m for m in ('traceback', 'base64', 'inspect', 'json', 'ast', 're', 'enum', 'functools',"
                " 'collections', 'contextlib', 'signal') if m in sys.modules))")
        out = subprocess.run([sys.executable, "-S", "-I", "-B", "-c", code, HERE], capture_output=True, text=True,
                             check=True).stdout
        self.assertEqual(out.strip(), "[]")

if __name__ == "__main__":
    unittest.main()
