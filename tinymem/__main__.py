from __future__ import annotations

from tinymem.entry import main

main()
