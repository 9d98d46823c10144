"""What `tm doctor` found: one Finding per check, with its fix, gathered in a report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"


@dataclass
class Finding:
    check: str
    status: str  # ok | warn | fail | skip
    message: str
    fix: str | None = None
    details: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "status": self.status,
            "message": self.message,
            "fix": self.fix,
            "details": self.details,
        }


@dataclass
class DoctorReport:
    findings: list[Finding] = field(default_factory=list)
    config: list[dict[str, Any]] = field(default_factory=list)
    api_keys: dict[str, str] = field(default_factory=dict)  # name -> "set" | "not set"
    stale_entities: int | None = None
    unreadable: list[str] = field(default_factory=list)

    def add(
        self,
        check: str,
        status: str,
        message: str,
        fix: str | None = None,
        details: list[str] | None = None,
    ) -> Finding:
        f = Finding(check, status, message, fix, list(details or []))
        self.findings.append(f)
        return f

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.status == FAIL]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.status == WARN]

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "problems": len(self.problems),
            "warnings": len(self.warnings),
            "checks": [f.to_json() for f in self.findings],
            "config": self.config,
            "api_keys": self.api_keys,
            "stale_entities": self.stale_entities,
            "unreadable_files": self.unreadable,
        }
