"""The local review server's environment and patches, without starting a server: the version
check, finding the server's interpreter, and no SDK patch at import."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from judging.errors import ReviewServerError
from judging.review.server import patches, process


def test_a_different_argilla_server_version_is_refused_naming_the_supported_one() -> None:
    with pytest.raises(ReviewServerError, match=r"argilla-server 2\.9\.1 is installed.*supports "
                                                r"argilla-server 2\.8\.0 only") as raised:
        patches.check_version("2.9.1")
    assert "make argilla-env" in str(raised.value)
    assert patches.check_version("2.8.0") == "2.8.0"


def test_without_argilla_server_the_check_says_how_to_build_its_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    with pytest.raises(ReviewServerError, match="argilla-server is not installed.*make argilla-env"):
        patches.check_version()


def test_no_server_environment_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no .venv-argilla here
    with pytest.raises(ReviewServerError, match="no environment for the local Argilla server.*"
                                                "make argilla-env.*JUDGING_ARGILLA_PYTHON"):
        process.server_python(None)
    with pytest.raises(ReviewServerError, match="not an executable file"):
        process.server_python(tmp_path / "nowhere" / "python")


def test_an_environment_without_argilla_server_is_refused() -> None:
    try:
        import argilla_server  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("this environment has argilla-server (the product environment must not)")
    with pytest.raises(ReviewServerError, match="has no argilla-server.*make argilla-env"):
        process.server_python(sys.executable)


def test_importing_push_leaves_the_sdks_tqdm_untouched() -> None:
    code = ("import argilla.records._dataset_records as r\n"
            "before = r.tqdm\n"
            "import judging.review.push as push\n"
            "assert r.tqdm is before, r.tqdm\n"
            "with push.sdk_progress_bars_off():\n"
            "    with push.sdk_progress_bars_off():\n"
            "        assert r.tqdm is not before and r.tqdm.keywords == {'disable': True}\n"
            "    assert r.tqdm is not before\n"
            "assert r.tqdm is before\n"
            "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_the_server_modules_need_no_more_of_judging_than_its_errors_and_services() -> None:
    from tests.argilla_server import server_python

    python = server_python()
    assert python is not None, "no server environment: run `make argilla-env`"
    code = ("import sys, judging.review.server, judging.review.server.patches\n"
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] == 'judging')))\n")
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert set(done.stdout.split()) == {"judging", "judging.errors", "judging.services",
                                        "judging.services.background", "judging.services.pidfile",
                                        "judging.review",
                                        "judging.review.server", "judging.review.server.patches",
                                        "judging.review.server.process"}
