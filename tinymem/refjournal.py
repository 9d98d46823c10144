"""`.git/tinymem/refs-moving.json`: the other refs an episode moves ahead of its ledger commit.

An episode that writes project notes moves `refs/tinymem/notes` and then the ledger ref, each
by compare-and-swap, under `ledger.lock`. A process killed between the two left the notes ref
holding a change no episode records: `tm note list` showed it, and `tm rebuild` and
`tm doctor` could not prove the ref. The writer now records the moves first and removes the
record once the ledger ref moved (or the moves were put back). Whoever holds `ledger.lock`
next and finds the record knows its writer is gone: when the ledger ref is still where the
writer read it, the episode was never committed and each moved ref goes back; otherwise the
episode stands and the record is only removed.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass

from tinymem.reflock import swap_ref, updating
from tinymem.repository import CACHE_DIRNAME, Repo

__all__ = ["Moving", "clear", "path", "record", "recover", "recover_if_left"]

FILE = "refs-moving.json"


@dataclass(frozen=True)
class Moving:
    ledger_ref: str
    ledger_old: str | None  # the tip the episode was built on (None: the ref is created)
    episode: str
    moves: tuple[tuple[str, str | None, str], ...]  # (ref, old, new)


def path(repo: Repo) -> str:
    # The common dir: the notes ref and the lock are shared by every worktree.
    return os.path.join(repo.common_dir, CACHE_DIRNAME, FILE)


def record(repo: Repo, moving: Moving) -> None:
    """Durably, before the first ref moves (the caller holds `updating`)."""
    target = path(repo)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    data = {
        "ledger_ref": moving.ledger_ref,
        "ledger_old": moving.ledger_old,
        "episode": moving.episode,
        "moves": [list(m) for m in moving.moves],
    }
    tmp = target + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, json.dumps(data).encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)


def clear(repo: Repo) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path(repo))


def _read(repo: Repo) -> Moving | None:
    try:
        with open(path(repo), "rb") as f:
            raw = json.loads(f.read())
        moves = tuple((str(r), o if o is None else str(o), str(n)) for r, o, n in raw["moves"])
        return Moving(str(raw["ledger_ref"]), raw["ledger_old"], str(raw["episode"]), moves)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return Moving("", None, "", ())  # unreadable: written by no finished `record`


def recover(repo: Repo) -> str | None:
    """With `updating` held: settle what a killed writer left; the notice, or None."""
    moving = _read(repo)
    if moving is None:
        return None
    put_back = []
    if moving.ledger_ref:
        tip = repo.state_tip(moving.ledger_ref)
        if tip == moving.ledger_old:  # the ledger commit never happened
            for ref, old, new in reversed(moving.moves):
                why = f"episode {moving.episode} not recorded (its tm was killed)"
                if swap_ref(repo, ref, old, new, why):
                    put_back.append(ref)
    clear(repo)
    if not put_back:
        return None
    return (
        f"put back {', '.join(put_back)}: a tm killed while recording episode"
        f" {moving.episode} had moved it ahead of the ledger"
    )


def recover_if_left(repo: Repo) -> str | None:
    """For the step every command runs first: a stat when nothing was left; when another tm
    is writing the ledger right now, its record is its own and stays."""
    if not os.path.exists(path(repo)):
        return None
    with updating(repo, wait=False) as mine:
        return recover(repo) if mine else None
