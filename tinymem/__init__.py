"""tinymem: git-backed memory and promotion gates for small local coding models."""

from __future__ import annotations

__version__ = "0.1.0"
