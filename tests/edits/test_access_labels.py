"""A new member never lands below an access label its block did not put it under.

C++ `private:` / `protected:` and Ruby's bare `private` / `protected` govern every member
below them: a member appended at the end of a class inherits whatever access the class ends
in. Real files: cli11's `Option` ends in `private:`, rack's `Response::Helpers` in
`protected`. Judged by effects: the file parses, every definition it had is there exactly
once, the new member is there once and has the access the block gave it.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from pathlib import Path

import pytest
from tree_sitter import Node

from tests.edits.realcorpus import make_repo
from tinymem.accept import plan
from tinymem.edits.proposals import build
from tinymem.edits.reply import parse_reply
from tinymem.edits.splice import Replacement, SpliceError, splice
from tinymem.edits.splice.syntax import parse_root
from tinymem.etv import verify
from tinymem.gitobjects import ObjectWriter
from tinymem.ledger import current
from tinymem.repository import open_repo
from tinymem.symbols import analyze, extract, language_for_path

OPTION = "include/CLI/Option.hpp"
RESPONSE = "lib/rack/response.rb"


@dataclass
class Outcome:
    before: bytes
    after: bytes
    reasons: list[str]  # why proposals were blocked, at ask time or at accept


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("access")
    return {
        "cli11": make_repo(base / "cli11", [f"cli11/{OPTION}"]),
        "rack": make_repo(base / "rack", [f"rack/{RESPONSE}"]),
    }


def run(workdir: Path, path: str, reply: str) -> Outcome:
    """The reply through the real pipeline: proposals on the State Map, then the accept plan
    (which writes nothing)."""
    repo = open_repo(str(workdir))
    view = current(repo)
    writer = ObjectWriter(repo.git)
    outcome = build(view, writer, repo.workdir, parse_reply(reply), verify(repo, view), {}, "t")
    writer.flush()
    proposals = [p for p in outcome.proposals if p.path == path]
    assert proposals, outcome.refused
    result = plan(repo, view, proposals)
    before = (workdir / path).read_bytes()
    after = result.files[path].after if path in result.files else before
    assert after is not None
    reasons = [f"{c.blocked.gate}: {c.blocked.detail}" for c in result.checks if c.blocked]
    return Outcome(before, after, reasons)


def assert_intact(path: str, before: bytes, after: bytes, added: str) -> None:
    """Parses; every definition once, as before; `added` once more."""
    language = language_for_path(path)
    assert language is not None
    assert analyze(language, after).clean
    old = collections.Counter(s.name for s in extract(path, before).symbols)
    new = collections.Counter(s.name for s in extract(path, after).symbols)
    old[added] += 1
    assert new == old


def _label_text(data: bytes, node: Node) -> str:
    return data[node.start_byte : node.end_byte].decode()


def access_of(path: str, data: bytes, name: str) -> str:
    """The access `name` has in `data`: the last label before it in its container's body,
    else the body's default (a C++ `class` private, anything else public)."""
    language = language_for_path(path)
    assert language is not None
    symbols = {s.name: s for s in extract(path, data).symbols}
    member, parent = symbols[name], symbols[name.rsplit(".", 1)[0]]
    node: Node | None = parse_root(language, data)
    holder: Node | None = None
    while node is not None and holder is None:
        inside = [c for c in node.children if c.start_byte <= member.start < c.end_byte]
        node = inside[0] if inside else None
        if (
            node is not None
            and node.start_byte >= parent.start
            and node.child_by_field_name("body") is not None
        ):
            holder = node
    assert holder is not None
    body = holder.child_by_field_name("body")
    assert body is not None
    access = "private" if holder.type == "class_specifier" else "public"
    label_type = "access_specifier" if language == "cpp" else "identifier"
    for child in body.children:
        if child.start_byte >= member.start:
            break
        text = _label_text(data, child)
        if child.type == label_type and text in ("public", "private", "protected"):
            access = text
    return access


CPP_PUBLIC = f"""```cpp path={OPTION}
class Option : public OptionBase<Option> {{
    ⋮
  public:
    /// True if the option was given on the command line
    bool was_given() const {{ return count() > 0; }}
    ⋮
}};
```
"""


def test_cpp_member_shown_under_public_goes_into_the_public_part(
    repos: dict[str, Path],
) -> None:
    """cli11's Option ends in `private:` (its `_validate_results` and the like): appended at
    the end, the model's public method became private."""
    out = run(repos["cli11"], OPTION, CPP_PUBLIC)
    assert out.reasons == []
    assert_intact(OPTION, out.before, out.after, "CLI.Option.was_given")
    assert access_of(OPTION, out.after, "CLI.Option.was_given") == "public"
    # At the end of the last public part: right above the class's `private:`.
    text = out.after.decode()
    assert text.index("bool was_given()") < text.index("  private:\n    /// Run the results")


def test_cpp_member_shown_without_label_goes_into_the_public_part(
    repos: dict[str, Path],
) -> None:
    reply = CPP_PUBLIC.replace("  public:\n", "")
    out = run(repos["cli11"], OPTION, reply)
    assert out.reasons == []
    assert_intact(OPTION, out.before, out.after, "CLI.Option.was_given")
    assert access_of(OPTION, out.after, "CLI.Option.was_given") == "public"


def test_cpp_member_after_a_member_it_shows_follows_it(repos: dict[str, Path]) -> None:
    count = "    std::size_t count() const { return results_.size(); }\n"
    reply = CPP_PUBLIC.replace("  public:\n", count + "\n")
    out = run(repos["cli11"], OPTION, reply)
    assert out.reasons == []
    assert_intact(OPTION, out.before, out.after, "CLI.Option.was_given")
    text = out.after.decode()
    assert text.index(count) < text.index("bool was_given()") < text.index("bool empty()")
    assert access_of(OPTION, out.after, "CLI.Option.was_given") == "public"


@pytest.mark.parametrize("label", ["private:", "protected:"])
def test_cpp_member_shown_under_a_non_public_label_is_blocked(
    repos: dict[str, Path], label: str
) -> None:
    """Where the splice would put it (the public part) is not what the block says: refused,
    nothing written, rather than given another access."""
    out = run(repos["cli11"], OPTION, CPP_PUBLIC.replace("public:", label))
    assert out.after == out.before
    assert any(f"under `{label}`" in r for r in out.reasons), out.reasons


def test_cpp_label_between_the_member_it_follows_and_it_is_blocked(
    repos: dict[str, Path],
) -> None:
    count = "    std::size_t count() const { return results_.size(); }\n"
    reply = CPP_PUBLIC.replace("  public:\n", count + "  private:\n")
    out = run(repos["cli11"], OPTION, reply)
    assert out.after == out.before
    assert any("under `private:`" in r for r in out.reasons), out.reasons


RUBY_HELPERS = f"""```ruby path={RESPONSE}
    module Helpers
      ⋮
      def not_modified?;        status == 304;                        end
      ⋮
    end
```
"""


def test_ruby_method_without_label_goes_above_protected(repos: dict[str, Path]) -> None:
    """rack's Response::Helpers ends in a `protected` part (`buffered_body!`, `append`):
    appended at the end, the new helper became protected."""
    out = run(repos["rack"], RESPONSE, RUBY_HELPERS)
    assert out.reasons == []
    name = "Rack.Response.Helpers.not_modified?"
    assert_intact(RESPONSE, out.before, out.after, name)
    assert access_of(RESPONSE, out.after, name) == "public"
    text = out.after.decode()
    assert text.index("def not_modified?") < text.index("\n    protected\n")


def test_ruby_method_shown_under_protected_is_blocked(repos: dict[str, Path]) -> None:
    reply = RUBY_HELPERS.replace("      def not", "      protected\n\n      def not")
    out = run(repos["rack"], RESPONSE, reply)
    assert out.after == out.before
    assert any("under `protected`" in r for r in out.reasons), out.reasons


def test_a_class_with_no_public_part_refuses_an_unplaced_member() -> None:
    """No public part to put it in, and nothing in the text says where: refused."""
    data = b"class A {\n    int x_;\n  protected:\n    int get() const { return x_; }\n};\n"
    with pytest.raises(SpliceError, match="private or protected"):
        splice("a.hpp", data, [Replacement("A.put", b"void put(int v) { x_ = v; }\n")])


def test_a_struct_starts_public() -> None:
    data = b"struct S {\n    int get() const { return x_; }\n  private:\n    int x_;\n};\n"
    result = splice("s.hpp", data, [Replacement("S.put", b"void put(int v) { x_ = v; }\n")])
    assert access_of("s.hpp", result.data, "S.put") == "public"
    assert result.data.index(b"void put") < result.data.index(b"private:")


def test_a_new_class_keeps_its_own_labels(repos: dict[str, Path]) -> None:
    """A class the block adds is written whole: its `private:` part is its own text."""
    reply = f"""```cpp path={OPTION}
namespace CLI {{
class Counter {{
  public:
    int value() const {{ return n_; }}

  private:
    void bump() {{ ++n_; }}
    int n_{{0}};
}};
}}
```
"""
    out = run(repos["cli11"], OPTION, reply)
    assert out.reasons == []
    new = {s.name for s in extract(OPTION, out.after).symbols}
    assert {"CLI.Counter", "CLI.Counter.value", "CLI.Counter.bump"} <= new
    assert access_of(OPTION, out.after, "CLI.Counter.bump") == "private"
    assert access_of(OPTION, out.after, "CLI.Counter.value") == "public"
