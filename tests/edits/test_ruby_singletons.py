"""Ruby class methods in either spelling (`def self.load`, `def load` inside `class << self`),
through `tm ask` on the loopback model server and `tm accept`, checked on disk (audit round 3,
item 5): a block in the other spelling than the file's changes the file's class method in the
file's spelling; an instance method given for a class method is held, never added; a class
method given beside an instance method of its name is added (`def self.` says what it is)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from tests.conftest import Initialise, tm, tm_ask
from tests.edits.realcorpus import CODE
from tests.modelserver import ModelServer
from tinymem.edits.align import align
from tinymem.edits.alignment import Evidence

LOADER = """module Cfg
  class Loader
    def self.load(path)
      new(path).read
    end

    def initialize(path)
      @path = path
    end

    def read
      File.read(@path)
    end
  end
end
"""

STORE = """module Util
  class Store
    class << self
      def build(opts)
        new(opts)
      end

      def reset!
        @cache = nil
      end
    end

    def initialize(opts)
      @opts = opts
    end
  end
end
"""


def _ask(repo: Path, server: ModelServer, reply: str, request: str) -> list[dict[str, object]]:
    server.add(reply)
    proc = tm_ask(repo, server, request, "--json", "--repair", "0")
    assert proc.returncode == 0, proc.stderr
    proposals: list[dict[str, object]] = json.loads(proc.stdout)["proposals"]
    return proposals


def test_a_class_method_given_in_class_self_changes_the_files_def_self(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"lib/cfg.rb": LOADER})
    reply = (
        "lib/cfg.rb\n```ruby\nclass << self\n  def load(path)\n    new(path).read.strip\n"
        "  end\nend\n```\n"
    )
    (prop,) = _ask(repo, server, reply, "make Loader.load strip the text")
    assert prop["confidence"] == "CONFIRMED"
    assert tm(repo, "accept", str(prop["id"])).returncode == 0
    assert (repo / "lib/cfg.rb").read_text() == LOADER.replace(
        "new(path).read\n", "new(path).read.strip\n"
    )


def test_a_class_method_given_as_def_self_changes_the_files_class_self_member(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"lib/util.rb": STORE})
    reply = (
        "lib/util.rb\n```ruby\ndef self.build(opts)\n  new(opts.merge(frozen: true))\nend\n```\n"
    )
    (prop,) = _ask(repo, server, reply, "make Store.build freeze its options")
    assert prop["confidence"] == "CONFIRMED"
    assert tm(repo, "accept", str(prop["id"])).returncode == 0
    assert (repo / "lib/util.rb").read_text() == STORE.replace(
        "new(opts)\n", "new(opts.merge(frozen: true))\n"
    )


def test_a_class_method_given_without_self_is_held_not_added_as_an_instance_method(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"lib/cfg.rb": LOADER})
    reply = "lib/cfg.rb\n```ruby\ndef load(path)\n  new(path).read.strip\nend\n```\n"
    (held,) = _ask(repo, server, reply, "make Loader.load strip the text")
    assert held["confidence"] != "CONFIRMED"
    refused = tm(repo, "accept", str(held["id"]))
    assert refused.returncode != 0
    assert "`self.load` (a class method)" in refused.stderr
    assert "instance method `load`" in refused.stderr
    assert (repo / "lib/cfg.rb").read_text() == LOADER


def test_a_member_given_in_its_class_without_self_is_held() -> None:
    block = b"class Loader\n  def load(path)\n    new(path).read.strip\n  end\nend\n"
    result = align("lib/cfg.rb", block, LOADER.encode(), Evidence())
    assert result.blocked is not None and "ask again with `def self.load`" in result.blocked


def test_a_class_method_beside_an_instance_method_is_added() -> None:
    # `def self.read` states a class method: added beside the instance method `read`, which
    # it leaves alone, whether the request names `Loader.read` or not (rev4 item 5).
    block = b"def self.read\n  new.read\nend\n"
    for qualified in (frozenset(), frozenset({"Loader.read"})):
        added = align("lib/cfg.rb", block, LOADER.encode(), Evidence(qualified=qualified))
        assert added.blocked is None, added.blocked
        assert [(t.name, t.op) for t in added.targets] == [("Cfg.Loader.read#2", "add")]


def test_rack_response_gets_a_redirect_factory_beside_its_redirect(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # The real rack response.rb has an instance method `redirect`; a reply adding the class
    # method was held unless the request said `Response.redirect`.
    original = (CODE / "rack/lib/rack/response.rb").read_text()
    initialised({"lib/rack/response.rb": original})
    factory = (
        "def self.redirect(target, status = 302)\n"
        "  new.tap { |r| r.redirect(target, status) }\nend\n"
    )
    reply = "lib/rack/response.rb\n```ruby\n" + factory + "```\n"
    (added,) = _ask(repo, server, reply, "add a redirect factory to lib/rack/response.rb")
    assert added["gates"]["A"] == "pass", added["gates"]  # type: ignore[index]
    assert tm(repo, "accept", str(added["id"])).returncode == 0
    written = (repo / "lib/rack/response.rb").read_text()
    assert "    def self.redirect(target, status = 302)\n" in written
    assert written.count("    def redirect(target, status = 302)\n") == 1  # the instance one kept
    ruby = shutil.which("ruby")
    if ruby is not None:
        done = subprocess.run(
            [ruby, "-c", "lib/rack/response.rb"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr


def test_an_instance_method_beside_a_class_method_of_one_name_still_reaches_its_own() -> None:
    source = LOADER.replace("    def read\n", "    def load\n      read\n    end\n\n    def read\n")
    block = b"def load\n  read.strip\nend\n"
    result = align("lib/cfg.rb", block, source.encode(), Evidence())
    assert result.blocked is None
    assert [(t.name, t.op) for t in result.targets] == [("Cfg.Loader.load#2", "modify")]


def test_a_class_self_given_in_its_class_changes_one_class_method_and_adds_another() -> None:
    block = (
        b"class Loader\n  class << self\n    def load(path)\n      new(path).read.strip\n"
        b"    end\n\n    def fresh\n      new('x')\n    end\n  end\nend\n"
    )
    result = align("lib/cfg.rb", block, LOADER.encode(), Evidence())
    assert result.blocked is None
    assert [(t.name, t.op) for t in result.targets] == [
        ("Cfg.Loader.load", "modify"),
        ("Cfg.Loader.fresh", "add"),
    ]
    load, fresh = (t.text for t in result.targets)
    assert load.startswith(b"def self.load(path)\n")
    assert fresh.startswith(b"def self.fresh\n")  # a new class method, not an instance one
    assert not result.notes, result.notes  # `class << self` is no line left unapplied
