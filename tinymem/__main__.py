from __future__ import annotations

from tinymem.cli import main

main()
