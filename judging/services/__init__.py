"""Background services of the command line: the local Argilla review server (`judging review
serve --background`) and the dashboard (`judging app --background`), each a detached process with
a pid file and a log under its home.

Standard library only (plus httpx, inside the helper): the review server's own environment
(argilla-server's pins, apart from judging's dependencies) imports this package too.
"""

from pathlib import Path

#: Where the background dashboard keeps its pid file and log unless told (`--app-home`): here,
#: so that the command line can show the default without importing the dashboard (Gradio).
APP_HOME = Path(".judging") / "app"
