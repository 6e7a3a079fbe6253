"""Tests for stoa_lean: its loads/dumps/parse give what json and ast give, on both of the project's Pythons."""
import ast
import json
import math
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stoa_lean  # noqa: E402

VALUES = [
    None, True, False, 0, -1, 2 ** 70, -(2 ** 64), 1.5, -0.0, 1e300, 5e-324, 0.1 + 0.2, "", "plain",
    "quote \" backslash \\ slash / tab \t newline \n nul \x00", "é ü 中文 🐍", "\ud800 lone surrogate", [], {},
    [1, [2, [3, [4, {"deep": [None]}]]]], {"a": 1, "b": [True, None, "x"], "é": {"nested": {}}},
    {1: "int key", 2.5: "float key", True: "bool key", None: "null key"}, (1, 2, 3), list(range(1000)),
    {"big": "x" * 100000},
]


class DumpsTest(unittest.TestCase):
    def test_gives_what_json_dumps_gives(self):
        for value in VALUES:
            with self.subTest(value=repr(value)[:60]):
                self.assertEqual(stoa_lean.dumps(value), json.dumps(value))
                self.assertEqual(stoa_lean.dumps(value, allow_nan=False), json.dumps(value, allow_nan=False))

    def test_subclasses_of_json_types_encode_as_json_encodes_them(self):
        class Score(float):
            pass

        class Count(int):
            pass

        class Row(dict):
            pass

        value = [Score(2.5), Count(3), Row(a=1)]
        self.assertEqual(stoa_lean.dumps(value), json.dumps(value))

    def test_non_finite_floats_follow_allow_nan(self):
        value = {"x": [math.nan, math.inf, -math.inf]}
        self.assertEqual(stoa_lean.dumps(value), json.dumps(value))
        self.assertRaises(ValueError, json.dumps, value, allow_nan=False)
        with self.assertRaises(ValueError) as ours:
            stoa_lean.dumps(value, allow_nan=False)
        self.assertIn("JSON compliant", str(ours.exception))

    def test_refuses_what_json_refuses(self):
        class Opaque(object):
            pass

        for bad, error in ((Opaque(), TypeError), ({(1, 2): "tuple key"}, TypeError), ({1, 2}, TypeError)):
            with self.subTest(bad=bad):
                self.assertRaises(error, json.dumps, bad)
                with self.assertRaises(error) as caught:
                    stoa_lean.dumps(bad)
                if isinstance(bad, Opaque):
                    self.assertEqual(str(caught.exception), "Object of type Opaque is not JSON serializable")
        loop = []
        loop.append(loop)
        self.assertRaises(ValueError, stoa_lean.dumps, loop)  # "Circular reference detected", as json says

    def test_a_failed_encoding_leaves_the_next_one_unharmed(self):
        shared = [1]
        self.assertRaises(TypeError, stoa_lean.dumps, [shared, object()])
        self.assertEqual(stoa_lean.dumps([shared, shared]), "[[1], [1]]")  # no circular reference left behind


class LoadsTest(unittest.TestCase):
    def test_gives_what_json_loads_gives(self):
        for value in VALUES:
            text = json.dumps(value)
            with self.subTest(text=text[:60]):
                self.assertEqual(stoa_lean.loads(text), json.loads(text))
                self.assertEqual(stoa_lean.loads(text.encode("utf-8")), json.loads(text))
        for text in ('  {"a": [1, 2.0, "\\u00e9"]}\n', '"caf\u00e9"', "123456789012345678901234567890", "-0.0", "1E400",
                     '{"a": 1, "a": 2}', "[NaN, Infinity, -Infinity]"):
            with self.subTest(text=text):
                ours, theirs = stoa_lean.loads(text), json.loads(text)
                self.assertEqual(json.dumps(ours), json.dumps(theirs))
                self.assertEqual(type(ours), type(theirs))

    def test_bad_json_raises_value_error_as_json_does(self):
        for text in ("", "   ", "{", "[1,]", '{"a" 1}', "[1] [2]", "nul", '"unterminated', '"bad \\x escape"',
                     '"raw \n newline"', b"\xff\xfe"):
            with self.subTest(text=text):
                self.assertRaises(ValueError, json.loads, text)
                self.assertRaises(ValueError, stoa_lean.loads, text)


class ParseTest(unittest.TestCase):
    def test_gives_the_tree_ast_parse_gives(self):
        for code in ("x = 1\nx + 1", "def f(a, *, b=2):\n    return f'{a!r:>{b}}'\n", "async def g():\n    await h()",
                     "class C:\n    __slots__ = ('a',)\n", "lambda: (yield)"):
            with self.subTest(code=code):
                self.assertEqual(ast.dump(stoa_lean.parse(code, "<cell>")), ast.dump(ast.parse(code, "<cell>")))
                self.assertIsInstance(stoa_lean.parse(code), ast.Module)
        self.assertIsInstance(stoa_lean.parse("1 + 1", mode="eval"), ast.Expression)

    def test_syntax_errors_name_the_file_and_line(self):
        with self.assertRaises(SyntaxError) as caught:
            stoa_lean.parse("x = 1\nif x\n", "<cell-7>")
        self.assertEqual((caught.exception.filename, caught.exception.lineno), ("<cell-7>", 2))


class FallbackTest(unittest.TestCase):
    def test_without_the_c_accelerator_it_uses_the_json_module(self):
        code = ("import sys; sys.modules['_json'] = None; sys.path.insert(0, sys.argv[1])\n"
                "import stoa_lean\n"
                "assert stoa_lean._codec is None\n"
                "print(stoa_lean.dumps({'a': [1, 'é']}), stoa_lean.loads(b'[1, 2]'), 'json' in sys.modules)")
        out = subprocess.run([sys.executable, "-I", "-c", code, HERE], capture_output=True, text=True, check=True)
        self.assertEqual(out.stdout.strip(), '{"a": [1, "\\u00e9"]} [1, 2] True')


if __name__ == "__main__":
    unittest.main()
