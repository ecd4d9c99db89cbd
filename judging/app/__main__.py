"""`python -m judging.app ...`: the foreground dashboard (what `judging app --background` runs)."""

import sys

from judging.app.process import main

sys.exit(main())
