"""`judging --help` starts quickly (issue 39: it took 2.3-3.2 s, 1.8 s of it importing the
dashboard): the command line imports a stage only when its command runs."""

from __future__ import annotations

import json
import subprocess
import sys

#: Modules no command's help may import: the dashboard (Gradio), the signals (scikit-image),
#: scipy and scikit-learn, and the run directory's models (pydantic schemas built at import).
HEAVY = ("judging.app", "judging.signals", "judging.calibrate", "judging.resolve",
         "judging.rundir", "gradio", "skimage", "sklearn", "scipy")


def test_help_imports_no_stage() -> None:
    code = ("import sys, json\n"
            "from judging.cli import main\n"
            "try:\n"
            "    main(['--help'])\n"
            "except SystemExit:\n"
            "    pass\n"
            "print(json.dumps(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert "Usage: " in done.stdout
    heavy = sorted({name for name in loaded for prefix in HEAVY
                    if name == prefix or name.startswith(prefix + ".")})
    assert heavy == [], heavy


def test_the_run_schedules_without_scipy_signal_or_stats() -> None:
    """The process that schedules `judging run` imports neither scipy.signal nor scipy.stats
    (about 1 s of CPU and 37 MB of RSS a run, issue 43): the copy check's window and the
    consensus MAD import them on use, in the measuring workers' forkserver."""
    code = ("import sys, json\n"
            "import judging.cli.run, judging.run, judging.consensus.build\n"
            "print(json.dumps(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    assert "judging.signals.copies" in loaded  # the measuring code is imported...
    assert not loaded & {"scipy.signal", "scipy.stats"}  # ...without them
