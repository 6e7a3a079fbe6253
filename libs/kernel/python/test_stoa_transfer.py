"""Tests for stoa_transfer (spec 2.8.2 literal extraction, handles, serialisation). Run:
python3 -m unittest discover -s libs/kernel/python -p 'test_stoa_transfer.py'
"""
import json
import os
import pathlib
import pickle
import shutil
import socket
import stat
import sys
import tempfile
import threading
import traceback
import types
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import stoa_transfer  # noqa: E402
from stoa_transfer import find_literals, rewrite_parts  # noqa: E402


def rewrite(code, mapping):
    """Preamble and rewritten body in one string (the driver runs them apart), to check both at once."""
    preamble, body = rewrite_parts(code, mapping)
    return preamble + "\n" + body if preamble else body


A = "<local>/data/a.csv</local>"
B = "<blob>b-1</blob>"
H = "h_0123456789ab"
PATHS = {A: {"kind": "path", "path": "/cache/a.csv"}, B: {"kind": "path", "path": "/cache/b.dat"}}


def run_parts(code, mapping, namespace=None):
    """Executes a rewritten cell the way the driver does: preamble, then the body under its own name."""
    namespace = {} if namespace is None else namespace
    preamble, body = rewrite_parts(code, mapping)
    if preamble:
        exec(compile(preamble, "<preamble>", "exec"), namespace)
    exec(compile(body, "<cell>", "exec"), namespace)
    return namespace


class Blocked(object):
    """Makes `import name` fail for the given modules while the block runs."""

    def __init__(self, *names):
        self.names = names
        self.saved = {}

    def __enter__(self):
        for name in self.names:
            self.saved[name] = sys.modules.get(name)
            sys.modules[name] = None
        return self

    def __exit__(self, *exc):
        for name, module in self.saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


class TagGrammar(unittest.TestCase):
    def test_closed_and_unclosed_tags_are_tags(self):
        for text in (A, B, "<local>/x", "<any_type>some id</any_type>"):
            self.assertTrue(stoa_transfer.is_asset_tag(text), text)

    def test_malformed_tags_are_not(self):
        for text in ("<local>/x</blob>", "<local></local>", "<local>", "<local><b>x</b></local>", " <local>/x</local>",
                     "<local>/x</local> ", "<local>/x</local>\n", "local>/x", "<lo-cal>/x</lo-cal>"):
            self.assertFalse(stoa_transfer.is_asset_tag(text), text)

    def test_handle_ids_are_h_and_twelve_lowercase_hex_digits(self):
        self.assertTrue(stoa_transfer.is_handle_id(H))
        for text in ("h_0123456789AB", "h_0123456789a", "h_0123456789abc", "H_0123456789ab", "h_0123456789ab\n", "xh_0123456789ab"):
            self.assertFalse(stoa_transfer.is_handle_id(text), text)


class Qualifying(unittest.TestCase):
    def found(self, code, expected):
        self.assertEqual(find_literals(code), expected, code)

    def test_assignment_value(self):
        self.found('x = "%s"' % A, [A])

    def test_annotated_assignment_value(self):
        self.found('x: str = "%s"' % A, [A])

    def test_positional_and_keyword_arguments(self):
        self.found('f("%s", path="%s")' % (A, B), [A, B])

    def test_return_value(self):
        self.found('def g():\n    return "%s"' % A, [A])

    def test_dict_list_tuple_and_set_literals(self):
        self.found('{"k": "%s"}\n["%s"]\n("%s",)\n{"%s"}' % (A, B, H, "<local>/s</local>"), [A, B, H, "<local>/s</local>"])

    def test_dict_keys_count_as_dict_literal_members(self):
        self.found('d = {"%s": 1}' % A, [A])

    def test_intermediate_nodes_are_skipped(self):
        self.found('x = "a" + "%s"' % A, [A])
        self.found('if f("%s"):\n    pass' % A, [A])
        self.found('y = d["%s"]' % A, [A])
        self.found('g = lambda: "%s"' % A, [A])

    def test_handle_ids_qualify_like_tags(self):
        self.found('df = "%s"\nsummarise("%s")' % (H, H), [H])


class NotQualifying(unittest.TestCase):
    def none(self, code):
        self.assertEqual(find_literals(code), [], code)

    def test_bare_expression_and_docstring(self):
        self.none('"%s"' % A)
        self.none('def f():\n    "%s"\n    pass' % A)

    def test_if_and_while_tests(self):
        self.none('if "%s":\n    pass' % A)
        self.none('while "%s":\n    break' % A)
        self.none('if x == "%s":\n    pass' % A)

    def test_assignment_target_side(self):
        self.none('d["%s"] = 1' % A)

    def test_annotation_side(self):
        self.none('x: "%s" = 1' % A)

    def test_called_object_is_not_an_argument(self):
        self.none('y = "%s".strip()' % A)

    def test_default_argument_values(self):
        self.none('def f(p="%s"):\n    pass' % A)

    def test_other_strings_and_bytes(self):
        self.none('x = "plain"\ny = b"%s"\nz = "<local>/a</blob>"' % A)

    def test_f_string_parts_and_expressions(self):
        self.none('x = f"<local>{p}</local>"')
        self.none('x = f"%s"' % A)
        self.none('x = f"{g(\'%s\')}"' % A)

    def test_syntax_error_finds_nothing_and_rewrites_nothing(self):
        code = 'x = "%s"\nif :' % A
        self.none(code)
        self.assertEqual(rewrite(code, PATHS), code)

    def test_null_byte_finds_nothing(self):
        self.none('x = "%s"\x00' % A)


class Order(unittest.TestCase):
    def test_unique_values_in_first_seen_order(self):
        code = 'a = "%s"\nb = f("%s", "%s")\nc = ["%s", "%s"]' % (B, A, B, H, A)
        self.assertEqual(find_literals(code), [B, A, H])


class Rewrite(unittest.TestCase):
    def test_reference_layout(self):
        code = 'x = "%s"\ny = load("%s")\nz = "%s"' % (A, B, A)
        self.assertEqual(rewrite(code, PATHS), "\n".join([
            "import pathlib as __agora_pathlib",
            "__agora_asset_0 = __agora_pathlib.Path('/cache/a.csv')",
            "__agora_asset_1 = __agora_pathlib.Path('/cache/b.dat')",
            "",
            "x = __agora_asset_0",
            "y = load(__agora_asset_1)",
            "z = __agora_asset_0",
        ]))

    def test_rewritten_code_binds_paths(self):
        ns = run_parts('x = "%s"\nsame = x is ("%s")' % (A, A), PATHS)
        self.assertEqual(ns["x"], pathlib.Path("/cache/a.csv"))
        self.assertTrue(ns["same"])

    def test_names_used_in_the_code_are_skipped(self):
        code = '__agora_asset_0 = 1\n__agora_asset_2 = 2\nx = ["%s", "%s"]' % (A, B)
        preamble, body = rewrite_parts(code, PATHS)
        self.assertIn("__agora_asset_1 = __agora_pathlib.Path('/cache/a.csv')", preamble)
        self.assertIn("__agora_asset_3 = __agora_pathlib.Path('/cache/b.dat')", preamble)
        self.assertTrue(body.endswith("x = [__agora_asset_1, __agora_asset_3]"))

    def test_non_ascii_text_before_the_literal_on_the_same_line(self):
        code = 'x = ("é€😀", "%s"); y = "ü"' % A
        ns = run_parts(code, PATHS)
        self.assertEqual(ns["x"], ("é€😀", pathlib.Path("/cache/a.csv")))
        self.assertEqual(ns["y"], "ü")
        self.assertEqual(rewrite_parts(code, PATHS)[1], 'x = ("é€😀", __agora_asset_0); y = "ü"')

    def test_multi_line_literal_keeps_the_line_numbers(self):
        tag = "<local>/a\nb</local>"
        code = 'x = f("""<local>/a\nb</local>""",\n      2)\ny = """<local>/a\nb</local>"""\nraise RuntimeError("line 6")'
        self.assertEqual(find_literals(code), [tag])
        preamble, body = rewrite_parts(code, {tag: {"kind": "path", "path": "/cache/ab"}})
        self.assertEqual(len(body.splitlines()), len(code.splitlines()))
        ns = {"f": lambda p, n: (p, n)}
        exec(compile(preamble, "<preamble>", "exec"), ns)
        try:
            exec(compile(body, "<cell>", "exec"), ns)
            self.fail("the cell should raise")
        except RuntimeError as exc:
            self.assertEqual(traceback.extract_tb(exc.__traceback__)[-1].lineno, 6)
        self.assertEqual(ns["x"], (pathlib.Path("/cache/ab"), 2))
        self.assertEqual(ns["y"], pathlib.Path("/cache/ab"))

    def test_implicitly_concatenated_literal(self):
        code = 'x = ("<local>/a"\n     "</local>")'
        ns = run_parts(code, {"<local>/a</local>": {"kind": "path", "path": "/c/a"}})
        self.assertEqual(ns["x"], pathlib.Path("/c/a"))

    def test_unclosed_tag(self):
        code = 'x = "<local>/data/u.csv"'
        self.assertEqual(find_literals(code), ["<local>/data/u.csv"])
        self.assertEqual(run_parts(code, {"<local>/data/u.csv": {"kind": "path", "path": "/c/u"}})["x"], pathlib.Path("/c/u"))

    def test_literals_outside_the_mapping_or_not_qualifying_stay(self):
        code = '"%s"\nx = "%s"\ny = "%s"' % (A, A, B)
        preamble, body = rewrite_parts(code, {A: PATHS[A]})
        self.assertEqual(body, '"%s"\nx = __agora_asset_0\ny = "%s"' % (A, B))

    def test_nothing_to_replace_returns_the_code(self):
        code = 'x = "%s"' % A
        self.assertEqual(rewrite(code, {B: PATHS[B]}), code)
        self.assertEqual(rewrite_parts(code, {}), ("", code))

    def test_objects_use_the_load_helper(self):
        code = 'df = "%s"\np = "%s"' % (H, A)
        mapping = {H: {"kind": "object", "path": "/k/in/h.pkl", "serializer": "dill"}, A: PATHS[A]}
        preamble, body = rewrite_parts(code, mapping)
        self.assertEqual(preamble, "import pathlib as __agora_pathlib\n"
                                   "__stoa_handle_0 = __stoa_load__('/k/in/h.pkl', 'dill')\n"
                                   "__agora_asset_0 = __agora_pathlib.Path('/cache/a.csv')\n")
        self.assertEqual(body, "df = __stoa_handle_0\np = __agora_asset_0")
        ns = run_parts(code, mapping, {"__stoa_load__": lambda path, serializer: ("loaded", path, serializer)})
        self.assertEqual(ns["df"], ("loaded", "/k/in/h.pkl", "dill"))

    def test_literals_inside_classes_survive_name_mangling(self):
        code = 'class Config:\n    p = "%s"\n    def m(self):\n        return "%s"\nv = Config().m()' % (A, H)
        mapping = {A: PATHS[A], H: {"kind": "object", "path": "/k/h.pkl", "serializer": "pickle"}}
        ns = run_parts(code, mapping, {"__stoa_load__": lambda path, serializer: 42})
        self.assertEqual(ns["Config"].p, pathlib.Path("/cache/a.csv"))
        self.assertEqual(ns["v"], 42)

    def test_paths_with_quotes_are_quoted(self):
        ns = run_parts('x = "%s"' % A, {A: {"kind": "path", "path": "/c/it's \"q\".csv"}})
        self.assertEqual(ns["x"], pathlib.Path("/c/it's \"q\".csv"))

    def test_bad_targets_are_refused(self):
        code = 'x = "%s"' % A
        for target in ({"kind": "file", "path": "/x"}, {"kind": "path"}, {"kind": "object", "path": "/x", "serializer": "marshal"}, "/x"):
            with self.assertRaises(ValueError):
                rewrite_parts(code, {A: target})

    def test_crlf_line_endings(self):
        code = 'a = "é"\r\nx = "%s"\r\ny = 2' % A
        self.assertEqual(run_parts(code, PATHS)["x"], pathlib.Path("/cache/a.csv"))


class Serialisation(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_best_serializer_falls_back_to_pickle(self):
        with Blocked("dill", "cloudpickle"):
            self.assertEqual(stoa_transfer.best_serializer(), "pickle")

    def test_dump_and_load_round_trip_with_a_private_file(self):
        path = os.path.join(self.dir, "o.pkl")
        serializer, size = stoa_transfer.dump({"a": [1, 2]}, path, "pickle")
        self.assertEqual((serializer, size), ("pickle", os.path.getsize(path)))
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        self.assertEqual(os.listdir(self.dir), ["o.pkl"])
        self.assertEqual(stoa_transfer.load(path, "pickle"), {"a": [1, 2]})

    def test_failed_dump_leaves_no_file(self):
        path = os.path.join(self.dir, "o.pkl")
        with self.assertRaises(Exception):
            stoa_transfer.dump(lambda: 1, path, "pickle")
        self.assertEqual(os.listdir(self.dir), [])

    def test_dump_over_the_limit_reports_the_full_size_and_keeps_nothing(self):
        path = os.path.join(self.dir, "o.pkl")
        with self.assertRaises(stoa_transfer.TooLarge) as caught:
            stoa_transfer.dump(b"x" * 5000, path, "pickle", max_bytes=1000)
        self.assertEqual(caught.exception.size, len(pickle.dumps(b"x" * 5000, protocol=pickle.HIGHEST_PROTOCOL)))
        self.assertEqual(os.listdir(self.dir), [])

    def _listen(self):
        """A unix socket the test reads or writes from a thread, as the host does."""
        path = os.path.join(self.dir, "s.sock")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(1)
        server.settimeout(10)
        self.addCleanup(server.close)
        return path, server

    def _read_all(self, server, into):
        def run():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                while True:
                    chunk = conn.recv(1 << 20)
                    if not chunk:
                        break
                    into.append(chunk)
        t = threading.Thread(target=run)
        t.start()
        return t

    def test_dump_into_a_socket_names_the_serializer_then_streams_the_pickle(self):
        path, server = self._listen()
        got = []
        reader = self._read_all(server, got)
        obj = {"a": bytearray(3_000_000), "b": [1, 2]}
        serializer, size = stoa_transfer.dump(obj, path, "pickle")
        reader.join(10)
        data = b"".join(got)
        head, _, body = data.partition(b"\n")
        self.assertEqual((serializer, head), ("pickle", b"pickle"))
        self.assertEqual(size, len(body))
        self.assertEqual(pickle.loads(body), obj)
        self.assertTrue(stat.S_ISSOCK(os.stat(path).st_mode))  # nothing replaced the socket with a file

    def test_a_dump_that_fails_before_its_first_byte_never_connects(self):
        path, server = self._listen()
        with self.assertRaises(TypeError):
            stoa_transfer.dump(threading.Lock(), path, "pickle")
        server.settimeout(0.05)
        with self.assertRaises(socket.timeout):
            server.accept()

    def test_a_dump_over_the_limit_stops_streaming_and_reports_the_full_size(self):
        path, server = self._listen()
        got = []
        reader = self._read_all(server, got)
        with self.assertRaises(stoa_transfer.TooLarge) as caught:
            stoa_transfer.dump([b"x" * 600_000, b"y" * 600_000], path, "pickle", max_bytes=1_000_000)
        reader.join(10)
        self.assertGreater(caught.exception.size, 1_200_000)
        self.assertLessEqual(len(b"".join(got)), 1_000_000 + len(b"pickle\n"))

    def _serve(self, server, payload):
        def run():
            conn, _ = server.accept()
            with conn:
                try:
                    conn.sendall(payload)
                except OSError:
                    pass
        t = threading.Thread(target=run)
        t.start()
        return t

    def test_load_from_a_socket_reads_exactly_one_object(self):
        path, server = self._listen()
        obj = {"big": bytes(2_000_000), "n": 7}
        writer = self._serve(server, pickle.dumps(obj, protocol=5))
        self.assertEqual(stoa_transfer.load(path, "pickle"), obj)
        writer.join(10)

    def test_large_buffers_are_read_into_memory_advised_for_huge_pages(self):
        advised = []
        real = stoa_transfer._advise_huge_pages
        stoa_transfer._advise_huge_pages = lambda view: (advised.append(view.nbytes), real(view))
        self.addCleanup(setattr, stoa_transfer, "_advise_huge_pages", real)
        big = bytearray(os.urandom(1024)) * 6000  # 6 MB, pickled in-band as one BYTEARRAY8
        path = os.path.join(self.dir, "b.pkl")
        stoa_transfer.dump({"big": big, "small": bytearray(10)}, path, "pickle")
        self.assertEqual(stoa_transfer.load(path, "pickle"), {"big": big, "small": bytearray(10)})
        # Only the large one (less what the unpickler had already read ahead); the small one is not worth a syscall.
        self.assertEqual(len(advised), 1)
        self.assertGreater(advised[0], len(big) - 70_000)
        sock_path, server = self._listen()
        writer = self._serve(server, pickle.dumps(big, protocol=5))
        self.assertEqual(stoa_transfer.load(sock_path, "pickle"), big)
        writer.join(10)
        self.assertEqual(len(advised), 2)

    def test_load_from_a_socket_refuses_a_cut_stream_and_trailing_bytes(self):
        path, server = self._listen()
        whole = pickle.dumps(bytes(100_000), protocol=5)
        writer = self._serve(server, whole[:50_000])
        with self.assertRaises(Exception):  # UnpicklingError or EOFError: the stream ended inside the object
            stoa_transfer.load(path, "pickle")
        writer.join(10)
        writer = self._serve(server, whole + b"more")
        with self.assertRaises(ValueError) as caught:
            stoa_transfer.load(path, "pickle")
        self.assertIn("continues after the end", str(caught.exception))
        writer.join(10)

    def test_missing_serializer_module_says_what_to_install(self):
        path = os.path.join(self.dir, "d.pkl")
        with open(path, "wb") as f:
            f.write(b"cdill._dill\n_load_type\n(S'list'\ntR.")  # what a dill payload references
        with Blocked("dill"):
            with self.assertRaises(ModuleNotFoundError) as caught:
                stoa_transfer.load(path, "dill")
        self.assertIn("serialised this object with dill", str(caught.exception))
        self.assertIn("Install dill in this kernel's environment", str(caught.exception))

    def test_serializer_payloads_without_its_types_load_with_plain_pickle(self):
        path = os.path.join(self.dir, "c.pkl")
        stoa_transfer.dump([1, "a"], path, "pickle")
        with Blocked("dill", "cloudpickle"):
            self.assertEqual(stoa_transfer.load(path, "cloudpickle"), [1, "a"])
            self.assertEqual(stoa_transfer.load(path, "dill"), [1, "a"])

    def test_dumping_with_a_missing_serializer_raises_module_not_found(self):
        with Blocked("dill"):
            with self.assertRaises(ModuleNotFoundError):
                stoa_transfer.dump(1, os.path.join(self.dir, "x.pkl"), "dill")

    def test_a_missing_user_module_is_named(self):
        module = types.ModuleType("stoa_test_gone")
        exec("class Thing(object):\n    pass", module.__dict__)
        module.Thing.__module__ = "stoa_test_gone"
        sys.modules["stoa_test_gone"] = module
        path = os.path.join(self.dir, "t.pkl")
        try:
            stoa_transfer.dump(module.Thing(), path, "pickle")
        finally:
            del sys.modules["stoa_test_gone"]
        with self.assertRaises(ModuleNotFoundError) as caught:
            stoa_transfer.load(path, "pickle")
        self.assertIn("refers to module 'stoa_test_gone'", str(caught.exception))

    def test_a_class_missing_from_main_explains_what_to_do(self):
        main = sys.modules["__main__"]
        exec("class StoaTestPoint(object):\n    pass", main.__dict__)
        main.StoaTestPoint.__module__ = "__main__"
        path = os.path.join(self.dir, "p.pkl")
        try:
            stoa_transfer.dump(main.StoaTestPoint(), path, "pickle")
        finally:
            del main.StoaTestPoint
        with self.assertRaises(AttributeError) as caught:
            stoa_transfer.load(path, "pickle")
        self.assertIn("run the same definition in this kernel first", str(caught.exception))
        self.assertIn("The sender used plain pickle", str(caught.exception))

    def test_dump_errors_name_the_type_and_what_would_help(self):
        try:
            pickle.dumps(lambda: 1)
            self.fail("a lambda should not pickle")
        except Exception as exc:
            with Blocked("dill", "cloudpickle"):
                text = stoa_transfer.describe_dump_error(exc)
            self.assertTrue(text.startswith(type(exc).__name__ + ": "), text)
        self.assertIn("dill or cloudpickle", text)


class Stash(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.stash_dir = os.path.join(self.dir, "stash")
        self.recorded = []

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_stash_writes_the_object_and_its_sidecar_and_records_the_handle(self):
        stash = stoa_transfer.make_stash(self.stash_dir, 10000, self.recorded.append)
        handle = stash({"a": 1})
        self.assertTrue(stoa_transfer.is_handle_id(handle))
        self.assertEqual(self.recorded, [handle])
        with open(os.path.join(self.stash_dir, handle + ".json")) as f:
            meta = json.load(f)
        self.assertEqual(meta["type"], "dict")
        self.assertEqual(meta["size"], os.path.getsize(os.path.join(self.stash_dir, handle + ".pkl")))
        self.assertEqual(stoa_transfer.load(os.path.join(self.stash_dir, handle + ".pkl"), meta["serializer"]), {"a": 1})
        self.assertEqual(stat.S_IMODE(os.stat(self.stash_dir).st_mode), 0o700)

    def test_stash_over_the_limit_is_refused_and_leaves_nothing(self):
        stash = stoa_transfer.make_stash(self.stash_dir, 100, self.recorded.append)
        with self.assertRaises(ValueError) as caught:
            stash(b"x" * 1000)
        self.assertRegex(str(caught.exception), r"^stash: object serialises to \d+ bytes, over the 100-byte handle limit\. "
                                                 r"Stash a smaller object \(e\.g\. a summary or a subset\) or write a file to AGORA_OUTPUT_DIR instead\.$")
        self.assertEqual(os.listdir(self.stash_dir), [])
        self.assertEqual(self.recorded, [])

    def test_stash_documents_handles_for_agents(self):
        stash = stoa_transfer.make_stash(self.stash_dir, 100, self.recorded.append)
        self.assertEqual(stash.__name__, "stash")
        self.assertIn("other sessions and", stash.__doc__)


if __name__ == "__main__":
    unittest.main()
