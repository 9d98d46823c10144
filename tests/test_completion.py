"""Shell completions: the committed scripts match the CLI, and completing stays light."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tinymem.commands.completion import script

FILES = {"bash": "tm.bash", "zsh": "_tm", "fish": "tm.fish"}


@pytest.mark.parametrize("shell", sorted(FILES))
def test_generated_files_have_not_drifted(shell: str) -> None:
    committed = (ROOT / "completions" / FILES[shell]).read_text()
    assert committed == script(shell), (
        f"regenerate: tm completion {shell} > completions/{FILES[shell]}"
    )


def _complete(words: str, cword: int) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        "from tinymem.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('HEAVY' if 'litellm' in sys.modules or 'openai' in sys.modules else 'LIGHT',"
        " file=sys.stderr)\n"
    )
    env = {
        **os.environ,
        "_TM_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(cword),
    }
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )


def test_bash_completes_commands_and_options_without_importing_litellm() -> None:
    proc = _complete("tm ad", 1)
    assert proc.stdout.split() == ["adopt"]
    assert proc.stderr.strip().endswith("LIGHT")
    proc = _complete("tm accept --a", 2)
    assert proc.stdout.split() == ["--all", "--allow-delete"]
    proc = _complete("tm hook ", 2)
    assert proc.stdout.split() == ["install", "uninstall", "run"]
