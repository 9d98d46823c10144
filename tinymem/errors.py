"""The one family of errors the core raises; the CLI maps each to one sentence and an exit code.

Exit codes are part of the interface (scripts rely on them) and are listed in docs/formats.md
and in `tm --help`. Keep the numbers stable.
"""

from __future__ import annotations

# An exit code that is not an error but an answer ("something is stale", "the replay differs").
EXIT_CHECK_FAILED = 1


class TinymemError(Exception):
    """Base class: `str(err)` is the one sentence shown to the user."""

    exit_code = 10


class UsageError(TinymemError):
    """The user asked for something that cannot be done as asked (bad argument, unknown id)."""

    exit_code = 2


class ModelSetupError(UsageError):
    """A model setting that cannot work as given (no provider, no key, a wrong path): told
    before any call, with the fix, as the configuration mistake it is."""


class RepositoryError(TinymemError):
    """Not inside a git work tree, a bare repository, or a repository tm cannot open."""

    exit_code = 3


class NotInitializedError(TinymemError):
    """No branch of the repository has a State Map yet: run `tm init`."""

    exit_code = 3


class NoBranchError(TinymemError):
    """HEAD is detached: tm keeps one State Map per branch, so there is none to use."""

    exit_code = 3


class ConcurrencyError(TinymemError):
    """The state ref kept moving under us (another tm process) and the retries ran out."""

    exit_code = 4


class GateBlockedError(TinymemError):
    """A promotion gate refused a proposal; files of the proposals that passed were written."""

    exit_code = 5


class ModelError(TinymemError):
    """The model endpoint could not be reached or gave an unusable answer."""

    exit_code = 6


class ModelUnreachableError(ModelError):
    exit_code = 6


class ModelNotFoundError(ModelError):
    exit_code = 7


class ModelTimeoutError(ModelError):
    exit_code = 8


class ModelReplyError(ModelError):
    """Empty, oversized or otherwise unusable reply."""

    exit_code = 9


class UnsafePathError(TinymemError):
    """A path escapes the repository, goes through a symlink or points into `.git/`."""

    exit_code = 11


class StaleError(TinymemError):
    """The working tree changed under an operation that required it not to (ETV)."""

    exit_code = 12


class HeadMovedError(StaleError):
    """HEAD named another branch (a `git switch`) before an operation could record on the
    branch it started on: its ledger ref is the one it read at its start."""

    def __init__(self, started: str, now: str | None) -> None:
        self.started = started
        self.now = now
        super().__init__(
            f"HEAD moved from branch {started} to {self.now_named} during the operation;"
            " nothing was recorded"
        )

    @property
    def now_named(self) -> str:
        return "a detached HEAD" if self.now is None else f"branch {self.now}"


class CorruptStateError(TinymemError):
    """The stored state is unreadable or inconsistent (a ref, an object, a JSON record)."""

    exit_code = 13


EXIT_CODES: tuple[tuple[int, str], ...] = (
    (0, "success"),
    (
        1,
        "a check found something: STALE entities (status --check), a replay mismatch (rebuild),"
        " a problem (doctor), a refused commit (hook)",
    ),
    (2, "usage error: bad option, unknown id or entity, a model setting that cannot work"),
    (3, "not a git work tree, a bare repository, HEAD not on a branch, or tm not initialized"),
    (4, "another tm process kept updating the state; try again"),
    (
        5,
        "a promotion gate blocked a proposal: it stays pending, its files untouched;"
        " the proposals that passed were promoted",
    ),
    (6, "the model endpoint is unreachable"),
    (7, "the model is unknown to the endpoint"),
    (8, "the model call timed out"),
    (9, "the model's reply was empty, oversized or unusable"),
    (
        10,
        "other tm error: git or the file system failed, a worker process gave no result for"
        " 600 s and was stopped (run the command again), or an internal error",
    ),
    (11, "a path is unsafe: outside the repository, through a symlink, or inside .git/"),
    (
        12,
        "the working tree changed during the operation, or HEAD moved to another branch;"
        " nothing was written",
    ),
    (13, "the stored tm state is corrupt or inconsistent"),
    (130, "interrupted"),
)
