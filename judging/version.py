"""The code version recorded in every judgment: the git commit (and a dirty flag) when run from a
checkout, else the installed package version."""

from __future__ import annotations

import functools
import subprocess
from importlib import metadata
from pathlib import Path


@functools.cache
def code_version() -> str:
    checkout = Path(__file__).resolve().parent.parent
    try:
        package_version = metadata.version("judging")
    except metadata.PackageNotFoundError:
        package_version = "unknown"
    if (checkout / ".git").exists():
        try:
            commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short=12", "HEAD"],
                                    capture_output=True, text=True, timeout=5, check=True
                                    ).stdout.strip()
            dirty = subprocess.run(["git", "-C", str(checkout), "status", "--porcelain",
                                    "--untracked-files=no", "--", "judging", "rubrics"],
                                   capture_output=True, text=True, timeout=5, check=True
                                   ).stdout.strip()
            return f"judging {package_version} git:{commit}{'+dirty' if dirty else ''}"
        except (OSError, subprocess.SubprocessError):
            pass
    return f"judging {package_version}"
