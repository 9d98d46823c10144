"""A SEARCH/REPLACE block matched only with leading whitespace set aside: its REPLACE is
re-indented as the file indents those lines, but never the inside of a multi-line string,
whose indentation is its value (audit D4)."""

from __future__ import annotations

import ast

from tinymem.edits.patches import apply_edit


def _sr(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


PY = b'''class Session:
    def close(self):
        """Closes all adapters."""
        for v in self.adapters.values():
            v.close()

    def query(self):
        return """
            SELECT *
            FROM t
        """
'''


def _strings(data: bytes) -> list[str]:
    return [
        node.value
        for node in ast.walk(ast.parse(data))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_a_new_multiline_string_keeps_its_lines_as_written() -> None:
    code = _sr(
        "for v in self.adapters.values():\n    v.close()\n",
        'for v in self.adapters.values():\n    v.close()\nlog.debug("""closed adapters:\n%s\n""",'
        " list(self.adapters))\n",
    )
    patched = apply_edit("search-replace", code, PY, "s.py")
    assert patched.problem is None, patched.problem
    assert patched.data == PY.replace(
        b"            v.close()\n",
        b'            v.close()\n        log.debug("""closed adapters:\n%s\n""",'
        b" list(self.adapters))\n",
    )
    assert "closed adapters:\n%s\n" in _strings(patched.data)


def test_a_string_the_search_shows_is_re_indented_with_the_code() -> None:
    # The model dedented the whole method, the SQL string with it: the line it adds to the
    # string takes the same shift as the lines the SEARCH shows.
    code = _sr(
        'return """\n    SELECT *\n    FROM t\n"""\n',
        'return """\n    SELECT *\n    FROM t\n    WHERE x\n"""\n',
    )
    patched = apply_edit("search-replace", code, PY, "s.py")
    assert patched.problem is None, patched.problem
    assert patched.data == PY.replace(
        b"            FROM t\n", b"            FROM t\n            WHERE x\n"
    )


def test_a_new_docstring_moves_with_the_code_as_the_splicer_moves_it() -> None:
    code = _sr(
        'def query(self):\n    return """\n',
        'def query(self):\n    """The rows,\n    one by one."""\n    return """\n',
    )
    patched = apply_edit("search-replace", code, PY, "s.py")
    assert patched.problem is None, patched.problem
    assert patched.data == PY.replace(
        b"    def query(self):\n",
        b'    def query(self):\n        """The rows,\n        one by one."""\n',
    )


def test_a_new_template_literal_keeps_its_lines_as_written() -> None:
    js = b"class A {\n  run() {\n    start();\n  }\n}\n"
    code = _sr("start();\n", "start();\nconst banner = `\nready\n  at ${when}\n`;\n")
    patched = apply_edit("search-replace", code, js, "a.js")
    assert patched.problem is None, patched.problem
    assert patched.data == js.replace(
        b"    start();\n", b"    start();\n    const banner = `\nready\n  at ${when}\n`;\n"
    )


def test_a_go_raw_string_keeps_its_lines_as_written() -> None:
    go = b"package m\n\nfunc f() string {\n\tx := 1\n\treturn g(x)\n}\n"
    code = _sr("x := 1\n", "x := 1\nconst usage = `usage:\n  m [flags]\n`\n")
    patched = apply_edit("search-replace", code, go, "m.go")
    assert patched.problem is None, patched.problem
    assert b"\tconst usage = `usage:\n  m [flags]\n`\n" in (patched.data or b"")


def test_without_a_grammar_a_line_that_may_be_inside_a_string_blocks() -> None:
    kotlin = b"class A {\n    fun f() {\n        val x = 1\n    }\n}\n"
    code = _sr("val x = 1\n", 'val x = 1\nval sql = """\nSELECT 1\n"""\n')
    patched = apply_edit("search-replace", code, kotlin, "A.kt")
    assert patched.data is None
    assert patched.problem is not None
    assert "line 3 of its REPLACE text may lie inside a multi-line string" in patched.problem
    shell = b"main() {\n    run\n}\n"
    code = _sr("run\n", "run\ncat <<EOF\n  done\nEOF\n")
    patched = apply_edit("search-replace", code, shell, "x.sh")
    assert patched.problem is not None and "line 3" in patched.problem


def test_without_a_grammar_lines_outside_strings_are_still_re_indented() -> None:
    yaml = b"jobs:\n  test:\n    steps:\n      - run: make\n"
    code = _sr("steps:\n  - run: make\n", "steps:\n  - run: make\n  - run: make check\n")
    patched = apply_edit("search-replace", code, yaml, "ci.yaml")
    assert patched.problem is None, patched.problem
    assert patched.data == yaml + b"      - run: make check\n"


def test_a_csharp_verbatim_string_keeps_its_lines_as_written() -> None:
    """`@"..."` and `$@"..."` span lines as written: their inner lines are the string's
    value (review of D4); the braces of an interpolation are code."""
    cs = (
        b'class A {\n    string Usage() {\n        var name = "tool";\n'
        b"        return name;\n    }\n}\n"
    )
    for literal in (b'@"Usage:\nrun"', b'$@"Usage:\n{name} run"'):
        code = _sr(
            'var name = "tool";\nreturn name;\n',
            'var name = "tool";\nreturn ' + literal.decode() + ";\n",
        )
        patched = apply_edit("search-replace", code, cs, "A.cs")
        assert patched.problem is None, patched.problem
        assert patched.data == cs.replace(b"return name;", b"return " + literal + b";")
