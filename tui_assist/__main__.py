from __future__ import annotations

import sys

from tui_assist.cli import main

sys.exit(main())
