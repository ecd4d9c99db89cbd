"""Background services of the command line: the local Argilla review server (`judging review
serve --background`) and the dashboard (`judging app --background`), each a detached process with
a pid file and a log under its home.

Standard library only (plus httpx, inside the helper): the review server's own environment
(argilla-server's pins, apart from judging's dependencies) imports this package too.
"""
