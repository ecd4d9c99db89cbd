"""`python -m judging.review.server --home DIR [--host H] [--port P]`: the foreground server."""

import sys

from judging.review.server.process import main

sys.exit(main())
