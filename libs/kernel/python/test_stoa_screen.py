"""Tests for stoa_screen (spec §3.8 / §1.2). Run:
python3 -m unittest discover -s libs/kernel/python -p 'test_stoa_screen.py'
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import stoa_screen  # noqa: E402
from stoa_screen import validate_code  # noqa: E402

REDIRECT = " Depending on what you are doing:\n- "
IMPORT = "Importing '"
IMPORT_FROM = "Importing from '"
CALL = "Call to '"
CALL_TAIL = ("' is not allowed — filesystem exploration/manipulation and dangerous metaprogramming "
             "functions are blocked")
TRAVERSAL = "Relative path traversal using '..' is not allowed"
ABSOLUTE = "Absolute path '"
OUTSIDE = "' is outside the allowed directories."


class ScreenCase(unittest.TestCase):
    def ok(self, code, **kw):
        ok, message = validate_code(code, **kw)
        self.assertTrue(ok, "expected %r to pass, got: %s" % (code, message))
        self.assertIsNone(message)

    def rejected(self, code, prefix, **kw):
        ok, message = validate_code(code, **kw)
        self.assertFalse(ok, "expected %r to be rejected" % (code,))
        self.assertTrue(message.startswith(prefix), "message %r does not start with %r" % (message, prefix))
        return message

    def call_rejected(self, code, name, **kw):
        message = self.rejected(code, CALL + name + CALL_TAIL, **kw)
        self.assertIn(REDIRECT, message)
        return message

    def abs_rejected(self, code, path, **kw):
        message = self.rejected(code, ABSOLUTE + path + OUTSIDE, **kw)
        self.assertIn(REDIRECT, message)
        self.assertTrue(message.endswith("\nDo not hardcode any other absolute path."))
        return message


class EmptyAndSyntax(ScreenCase):
    def test_empty_and_whitespace(self):
        for code in ("", "   ", "\n\t\n"):
            self.assertEqual(validate_code(code), (False, "Code cannot be empty"))

    def test_unparseable_code_is_accepted(self):
        self.ok("def broken(:\n  import subprocess")
        self.ok("x = (1,")

    def test_plain_code_passes(self):
        self.ok("import numpy as np\nx = np.arange(10)\nprint(x.sum())")
        self.ok("def send():\n    return 'send'\nsend()  # merely containing the word send")


class BlockedModules(ScreenCase):
    def test_import_blocked_modules(self):
        for module in sorted(stoa_screen.BLOCKED_MODULES):
            message = self.rejected("import %s" % module, IMPORT + module + "' is not allowed")
            self.assertIn("Blocked modules: ftplib, http.server, shutil, smtplib, socketserver, subprocess, "
                          "telnetlib.", message)
            self.assertIn(REDIRECT, message)

    def test_subprocess_import_rejected(self):
        self.rejected("import subprocess\nsubprocess.run(['ls'])", "Importing 'subprocess' is not allowed")
        self.rejected("import os, subprocess as sp", "Importing 'subprocess' is not allowed")

    def test_from_import_and_dotted_prefix(self):
        self.rejected("from subprocess import run", IMPORT_FROM + "subprocess' is not allowed")
        self.rejected("from http.server import HTTPServer", IMPORT_FROM + "http.server' is not allowed")
        self.rejected("import http.server", IMPORT + "http.server' is not allowed")
        self.rejected("import shutil.sub", IMPORT + "shutil.sub' is not allowed")  # prefix 'shutil' matches

    def test_similar_modules_allowed(self):
        self.ok("import http.client\nimport http\nfrom http import cookies\nimport shutils_helper")

    def test_custom_blocked_modules(self):
        self.ok("import subprocess", blocked_modules=set())
        self.rejected("import requests", IMPORT + "requests'", blocked_modules={"requests"})

    def test_import_inside_function_is_found(self):
        self.rejected("def f():\n    import shutil\n", IMPORT + "shutil'")


class BlockedCalls(ScreenCase):
    def test_os_family_calls(self):
        for name in sorted(stoa_screen.BLOCKED_FS_CALLS["os"]):
            self.call_rejected("import os\nos.%s('x')" % name, name)
            self.call_rejected("os.%s('x')" % name, name)  # literal `os` without import

    def test_glob_and_pathlib_family_calls(self):
        self.call_rejected("import glob\nglob.glob('*.csv')", "glob")
        self.call_rejected("import glob\nglob.iglob('*.csv')", "iglob")
        self.call_rejected("glob.glob('*.csv')", "glob")
        self.call_rejected("from pathlib import Path\np = Path('/tmp')\np.iterdir()", "iterdir")
        self.call_rejected("from pathlib import Path\np = Path('/tmp')\nlist(p.rglob('*'))", "rglob")

    def test_bare_calls_checked_directly(self):
        self.call_rejected("from os import listdir\nlistdir('.')", "listdir")
        self.call_rejected("eval('1+1')", "eval")
        self.call_rejected("exec('x = 1')", "exec")
        self.call_rejected("compile('1', 'f', 'eval')", "compile")
        self.call_rejected("getattr(obj, 'x')", "getattr")
        self.call_rejected("__import__('os')", "__import__")
        self.call_rejected("walk('.')", "walk")

    def test_dotted_call_matches_last_name(self):
        self.call_rejected("import os\nos.system('ls')", "system")

    def test_receiver_not_plain_name_allowed(self):
        self.ok("from pathlib import Path\nPath('/tmp').iterdir()")
        self.ok("a.b.remove(1)")
        self.ok("import os\nos.path.walk")  # not a call
        self.ok("self.model.eval()")
        self.ok("get_obj().eval()")

    def test_other_receivers_allowed(self):
        self.ok("df.rename(columns={'a': 'b'})")
        self.ok("model.eval()")
        self.ok("network.remove(node)")
        self.ok("s = 'a-b'\ns.replace('-', '_')")
        self.ok("items.compile()")

    def test_same_cell_import_from_other_module(self):
        self.call_rejected("import re\nre.compile(x)", "compile")
        self.ok("re.compile(x)")  # no same-cell import: unknown receiver
        self.call_rejected("import numpy as np\nnp.getattr()", "getattr")
        self.call_rejected("import numpy as np\nnp.remove(x)", "remove")  # any blocked list
        self.ok("import numpy as np\nnp.array([1]).sum()")

    def test_tainted_receiver_only_blocked_for_its_family(self):
        self.ok("import os\nos.getenv('HOME')")
        self.ok("import os\nos.eval()")  # os family: only os names
        self.ok("from pathlib import Path\np = Path('/tmp/x')\np.glob('*.csv')")  # glob not a pathlib name
        self.ok("from pathlib import Path\np = Path('/tmp/x')\np.exists()")
        self.ok("import glob\nglob.escape('x')")

    def test_import_aliases_taint(self):
        self.call_rejected("import os as o\no.listdir('.')", "listdir")
        self.call_rejected("import os.path\nos.listdir('.')", "listdir")
        self.call_rejected("import pathlib as pl\np = pl.Path('/tmp')\np.iterdir()", "iterdir")
        self.call_rejected("import pathlib\np = pathlib.PurePosixPath('/tmp')\np.rglob('*')", "rglob")

    def test_all_path_constructors_taint(self):
        for ctor in sorted(stoa_screen.PATH_CONSTRUCTORS):
            self.call_rejected("p = %s('/tmp')\np.iterdir()" % ctor, "iterdir")

    def test_taint_propagates_through_copies_and_attributes(self):
        self.call_rejected("import os\nq = os\nq.listdir('.')", "listdir")
        self.call_rejected("import os\npp = os.path\npp.unlink('x')", "unlink")
        self.call_rejected("p = Path('/tmp')\nq = p\nr = q\nr.iterdir()", "iterdir")
        self.call_rejected("import glob\ng = glob\ng.glob('*')", "glob")

    def test_taint_is_bounded_to_three_passes(self):
        # Assignments listed in reverse order need one pass each; forward chains resolve in one pass.
        self.call_rejected("c = b\nb = a\na = Path('/tmp')\nc.iterdir()", "iterdir")
        self.ok("d = c\nc = b\nb = a\na = Path('/tmp')\nd.iterdir()")
        self.call_rejected("a = Path('/tmp')\nb = a\nc = b\nd = c\ne = d\ne.iterdir()", "iterdir")

    def test_custom_blocked_calls(self):
        calls = {"os": {"listdir"}}
        self.ok("import glob\nglob.glob('*')", blocked_calls=calls)
        self.call_rejected("import os\nos.listdir('.')", "listdir", blocked_calls=calls)
        self.ok("import os\nos.walk('.')", blocked_calls=calls)
        self.ok("eval('1')", dangerous_calls=set())


class PathLiterals(ScreenCase):
    def test_parent_traversal(self):
        for code in ("open('../data.csv')", "x = 'a/../b'", "x = '..'", "x = 'a\\\\..\\\\b'", "x = '/tmp/../etc'"):
            message = self.rejected(code, TRAVERSAL)
            self.assertIn(REDIRECT, message)

    def test_traversal_exemptions(self):
        self.ok("x = 'https://example.com/a/../b'")
        self.ok("x = '//server/share/../x'")
        self.ok("x = 'wait...'\ny = 'a..b/c'\nz = '...'")

    def test_absolute_paths(self):
        self.abs_rejected("open('/etc/passwd')", "/etc/passwd")
        self.abs_rejected("x = '/tmpfoo'", "/tmpfoo")
        self.abs_rejected("x = '  /home/user  '", "/home/user")
        message = self.abs_rejected("x = '/data/x.csv'", "/data/x.csv")
        self.assertIn("agora_output(", message)
        self.assertIn("AGORA_OUTPUT_DIR", message)
        self.assertIn("<local>", message)
        self.assertIn("<blob>", message)
        self.assertIn("(not visible to the user): /tmp.", message)

    def test_allowed_prefixes(self):
        self.ok("open('/tmp')\nopen('/tmp/')\nopen('/tmp/work/data.csv', 'w')")
        self.ok("x = '//cdn.example.com/lib.js'")
        self.ok("x = 'relative/path.csv'")
        self.ok("x = '/data/a.csv'", allowed_prefixes=("/tmp", "/data"))
        self.abs_rejected("x = '/tmp/a'", "/tmp/a", allowed_prefixes=("/data",))

    def test_lone_slash_separator_exemptions(self):
        for method in sorted(stoa_screen.SEPARATOR_METHODS):
            self.ok("s.%s('/')" % method)
        self.ok("s.split('/', 1)\ns.replace('/', '_')\ns.split(sep='/')")
        self.ok("'/'.join(parts)")
        self.ok("parts = ['a', 'b']\npath = '/'.join(parts)")

    def test_other_lone_slash_rejected(self):
        self.abs_rejected("x = '/'", "/")
        self.abs_rejected("open('/')", "/")
        self.abs_rejected("'/'.split(s)", "/")  # only "/".join is exempt as a receiver

    def test_bytes_and_non_strings_ignored(self):
        self.ok("x = b'/etc/passwd'\ny = 3 % 2\nz = 1 + 2")


class DynamicPaths(ScreenCase):
    def test_concatenation(self):
        self.abs_rejected("p = '/etc' + '/passwd'", "/etc/passwd")
        self.ok("p = '/tmp/' + 'x.csv'")
        self.abs_rejected("p = '/tmp' + '/x.csv'", "/x.csv")  # every literal is also checked on its own
        self.rejected("p = 'data/' + '..' + '/x'", TRAVERSAL)

    def test_percent_format_left_side(self):
        self.abs_rejected("p = '/etc/%s' % name", "/etc/%s")
        self.ok("p = '/tmp/%s.csv' % name")

    def test_fstrings(self):
        self.abs_rejected("p = f'/etc/{x}'", "/etc/{expr}")
        self.ok("p = f'/tmp/{x}.csv'")
        self.rejected("p = f'{base}/../secret'", TRAVERSAL)

    def test_str_format_base(self):
        self.abs_rejected("p = '/var/{}'.format(x)", "/var/{}")
        self.ok("p = '/tmp/{}'.format(x)")

    def test_os_path_join(self):
        self.abs_rejected("import os\nos.path.join('/etc', 'passwd')", "/etc/passwd")
        self.abs_rejected("os.path.join('/etc','passwd')", "/etc/passwd")
        self.abs_rejected("os.path.join('/', 'etc')", "/etc")  # the lone "/" is exempt, the join is not
        self.abs_rejected("import os.path as osp\nosp.join('/', 'home', name)", "/home")
        self.ok("import os\nos.path.join('/tmp', 'a', name)")
        self.ok("import os\nos.path.join('/', 'tmp', 'x')")
        self.ok("import os\nos.path.join(AGORA_OUTPUT_DIR, 'x.csv')")


class DisallowedActions(unittest.TestCase):
    def test_default_text(self):
        text = stoa_screen.disallowed_actions_text(("/tmp",))
        self.assertTrue(text.startswith("Disallowed actions:\n"))
        self.assertIn("- Blocked imports: ftplib, http.server, shutil, smtplib, socketserver, subprocess, "
                      "telnetlib\n", text)
        self.assertIn("- Blocked calls: chdir, fchdir, fwalk, getcwd, glob, iglob, iterdir, link, listdir, "
                      "readlink, remove, removedirs, rename, renames, replace, rglob, rmdir, scandir, symlink, "
                      "system, unlink, walk\n", text)
        self.assertIn("- Blocked dangerous calls: __import__, compile, eval, exec, getattr\n", text)
        self.assertIn("- Absolute path literals are allowed only under /tmp (internal scratch", text)
        self.assertIn("\n\nAuto-resolution of assets:\n", text)

    def test_custom_lists_sorted_and_empty(self):
        text = stoa_screen.disallowed_actions_text(("/tmp", "/data"), blocked_modules=set(),
                                                   blocked_calls={"x": ["b", "a"]}, dangerous_calls=())
        self.assertIn("- Blocked imports: (none)\n", text)
        self.assertIn("- Blocked calls: a, b\n", text)
        self.assertIn("- Blocked dangerous calls: (none)\n", text)
        self.assertIn("allowed only under /data, /tmp (internal scratch", text)


if __name__ == "__main__":
    unittest.main()
