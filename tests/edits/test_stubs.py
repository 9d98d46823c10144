"""Placeholder bodies (`...`, `todo!()`) where the file has code, on a real file."""

from __future__ import annotations

from tests.edits.realcorpus import CODE
from tinymem.edits.stubs import placeholder_members
from tinymem.symbols import extract

SESSIONS = "src/requests/sessions.py"


def _text(name: str) -> bytes:
    data = (CODE / "requests" / SESSIONS).read_bytes()
    (sym,) = [s for s in extract(SESSIONS, data).symbols if s.name == name]
    return data[sym.start : sym.end]


def test_a_stub_of_a_method_with_code_is_a_placeholder() -> None:
    mount = _text("Session.mount")
    stub = b"def mount(self, prefix: str, adapter: BaseAdapter) -> None: ...\n"
    assert placeholder_members(SESSIONS, mount, stub) == [""]
    documented = b'def mount(self, prefix, adapter):\n    """Registers."""\n    ...\n'
    assert placeholder_members(SESSIONS, mount, documented) == [""]
    changed = mount.replace(b"self.adapters[prefix] = adapter", b"self.adapters[prefix] = a")
    assert placeholder_members(SESSIONS, mount, changed) == []


def test_a_member_of_a_class_is_judged_inside_it() -> None:
    session = _text("Session")
    start = session.index(b"    def mount(")
    end = session.index(b"    def __getstate__(")
    stubbed = session[:start] + b"    def mount(self, prefix, adapter): ...\n\n" + session[end:]
    assert placeholder_members(SESSIONS, session, stubbed) == ["mount"]


def test_what_the_file_itself_writes_as_a_stub_is_not_a_placeholder() -> None:
    # SessionRedirectMixin.send is `...` in requests itself (a protocol-like declaration).
    send = _text("SessionRedirectMixin.send")
    assert send.rstrip().endswith(b"...")
    assert placeholder_members(SESSIONS, send, send) == []


def test_rust_todo_and_unimplemented() -> None:
    old = b"fn next(&mut self) -> Option<u8> {\n    self.it.next()\n}\n"
    for body in (b"todo!()", b'unimplemented!("later")', b"todo!();"):
        new = b"fn next(&mut self) -> Option<u8> {\n    " + body + b"\n}\n"
        assert placeholder_members("src/x.rs", old, new) == [""], body
    assert placeholder_members("src/x.rs", old, old) == []
