"""A member given inside its class, where the file nests that class deeper than the block
does (`module Rack; class Response` given as `class Response`, a class inside a namespace or
another class): the member lands at the file's indentation, every line of it (audit round 3,
item 6: the first line moved to its place and the rest kept the block's depth, two to four
columns too deep)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Initialise, tm, tm_ask
from tests.edits.realcorpus import CODE
from tests.modelserver import ModelServer

RESPONSE = (CODE / "rack/lib/rack/response.rb").read_text()
CLOSE = "    def close\n      @body.close if @body.respond_to?(:close)\n    end\n"
NEW_CLOSE = (
    "    def close\n      if @body.respond_to?(:close)\n        @body.close\n      end\n    end\n"
)
RUBY_REPLY = (
    "```ruby\n# lib/rack/response.rb\nclass Response\n  def close\n"
    "    if @body.respond_to?(:close)\n      @body.close\n    end\n  end\nend\n```\n"
)

EXCEPTION = (CODE / "pythonnet/src/runtime/PythonException.cs").read_text()
CLONE = """        public PythonException Clone()
            => new(
                type: Type,
                value: Value,
                traceback: Traceback,
                Message,
                InnerException
            );
"""
NEW_CLONE = """        public PythonException Clone()
        {
            return new(Type, Value, Traceback, Message, InnerException);
        }
"""
CS_REPLY = (
    "```csharp\n// src/runtime/PythonException.cs\npublic class PythonException :"
    " System.Exception\n{\n    public PythonException Clone()\n    {\n"
    "        return new(Type, Value, Traceback, Message, InnerException);\n    }\n}\n```\n"
)

NESTED_PY = """class Outer:
    class Meta:
        ordering = ["id"]

        def label(self):
            return "meta"

    def name(self):
        return "outer"
"""
PY_REPLY = (
    "```python\n# m.py\nclass Meta:\n    def label(self):\n        if self:\n"
    '            return "META"\n        return "meta"\n```\n'
)
NEW_LABEL = (
    '        def label(self):\n            if self:\n                return "META"\n'
    '            return "meta"\n'
)

NAMESPACE_TS = """export namespace Api {
  export class Client {
    get(url: string): string {
      return url;
    }
  }
}
"""
TS_REPLY = (
    "```ts\n// a.ts\nexport class Client {\n  post(url: string): string {\n    if (!url) {\n"
    "      return '';\n    }\n    return url;\n  }\n}\n```\n"
)
NEW_POST = (
    "\n    post(url: string): string {\n      if (!url) {\n        return '';\n      }\n"
    "      return url;\n    }\n"
)

CASES = {
    "ruby-rack-module": (
        "lib/rack/response.rb",
        RESPONSE,
        RUBY_REPLY,
        "Response#close should use an if",
        RESPONSE.replace(CLOSE, NEW_CLOSE),
    ),
    "csharp-pythonnet-namespace": (
        "src/runtime/PythonException.cs",
        EXCEPTION,
        CS_REPLY,
        "write PythonException.Clone as a block body",
        EXCEPTION.replace(CLONE, NEW_CLONE),
    ),
    "python-nested-class": (
        "m.py",
        NESTED_PY,
        PY_REPLY,
        "Meta.label should shout",
        NESTED_PY.replace('        def label(self):\n            return "meta"\n', NEW_LABEL),
    ),
    "typescript-namespace": (
        "a.ts",
        NAMESPACE_TS,
        TS_REPLY,
        "add Client.post",
        NAMESPACE_TS.replace("      return url;\n    }\n", "      return url;\n    }\n" + NEW_POST),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_member_of_a_class_the_file_nests_deeper_lands_at_the_files_depth(
    repo: Path, initialised: Initialise, server: ModelServer, case: str
) -> None:
    path, text, reply, request, expected = CASES[case]
    assert expected != text
    initialised({path: text})
    server.add("Here it is:\n\n" + reply)
    proc = tm_ask(repo, server, request, "--json")
    assert proc.returncode == 0, proc.stderr
    (prop,) = json.loads(proc.stdout)["proposals"]
    accepted = tm(repo, "accept", prop["id"])
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert (repo / path).read_text() == expected
    assert tm(repo, "status", "--check").returncode == 0
