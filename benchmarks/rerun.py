"""`judging rerun`'s costs: the sandbox's overhead, a cached environment, a lock shared by claims.

1. **Sandbox overhead.** One script that burns 1 second of CPU, run RUNS times bare (the
   environment's Python as a plain subprocess, in a copy of its folder) and RUNS times in the
   sandbox (`Sandbox.run`: prlimit, bubblewrap's namespaces, the submission copied into the
   scratch tmpfs, the uid dropped, the results pipe), alternating; the ratio of the medians of
   the wall times. Bound (issue 29): <= 1.5x.
2. **A cached environment is reused with no install.** The environment of a requirements file
   (a tiny package from the registry) is built once into a fresh cache (its build time), then
   asked for again: no build (no uv process, no build log), and the time that takes.
3. **N claims sharing one lock file build it once.** N submissions with byte-identical
   requirements files, judged offline, then `judging rerun`: environments built (1), distinct
   keys (1), and the wall time of the rerun.
4. **The contained install's cost** (issue 38). One requirements file of a few packages from the
   registry (INSTALL_LOCK), installed cold (a fresh uv cache each time) INSTALLS times bare (uv
   on this machine, its network) and INSTALLS times as `judging rerun` installs it
   (`EnvCache.ensure`: the sandbox, its own network namespace, the route to the index, a cache
   of its own), alternating; the ratio of the medians. Bound: <= 1.5x (the containment must not
   cost more than half an install again).

    PYTHONPATH=. .venv/bin/python benchmarks/rerun.py [--runs 5] [--claims 8] [--installs 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from click.testing import CliRunner

from judging.cli import main as cli
from judging.rerun import DEFAULT_LIMITS, EnvCache, Sandbox
from judging.rerun.environment import ENV_MOUNT, find_environment, find_interpreter, uv_binary
from judging.rundir import read_reruns
from tests.conftest import SubmissionBuilder

REQUIREMENT = "iniconfig==2.0.0\n"
BURN = ("import time\nstart = time.process_time()\nwhile time.process_time() - start < 1.0:\n"
        "    pass\nprint('{\"top1\": 93.8}')\n")
OVERHEAD_BOUND = 1.5
#: A few packages (wheels of a few MB, a dozen files) whose install time is mostly downloads and
#: unpacking, not uv's start.
INSTALL_LOCK = "numpy\nrequests\nrich\npydantic\niniconfig==2.0.0\n"
INSTALL_BOUND = 1.5


def overhead(root: Path, runs: int) -> tuple[float, float, float]:
    sub = root / "burn"
    sub.mkdir()
    (sub / "burn.py").write_text(BURN)
    (sub / "requirements.txt").write_text(REQUIREMENT)
    sandbox = Sandbox()
    sandbox.check()
    cache = EnvCache(root / "cache-overhead")
    built = cache.ensure(sub, find_environment(sub, sub / "burn.py", None), sandbox=sandbox)
    bare_python = str(built.path / "bin" / "python")
    env = {"PATH": f"{ENV_MOUNT}/bin:/usr/bin:/bin", "VIRTUAL_ENV": ENV_MOUNT}
    bare, boxed = [], []
    for _ in range(runs):
        copy = root / "bare-copy"
        started = time.perf_counter()
        shutil.copytree(sub, copy)
        subprocess.run([bare_python, "burn.py"], cwd=copy, check=True, capture_output=True)
        bare.append(time.perf_counter() - started)
        shutil.rmtree(copy)
        started = time.perf_counter()
        outcome = sandbox.run([f"{ENV_MOUNT}/bin/python", "burn.py"], submission=sub,
                              limits=DEFAULT_LIMITS, mounts=cache.run_mounts(built), env=env)
        boxed.append(time.perf_counter() - started)
        assert outcome.exit_code == 0, outcome
    b, s = statistics.median(bare), statistics.median(boxed)
    return b, s, s / b


def reuse(root: Path) -> tuple[float, float, bool]:
    sub = root / "reuse"
    sub.mkdir()
    (sub / "run.py").write_text("print(1)\n")
    (sub / "requirements.txt").write_text(REQUIREMENT)
    sandbox = Sandbox()
    cache = EnvCache(root / "cache-reuse")
    request = find_environment(sub, sub / "run.py", None)
    first_log, second_log = root / "build-1.txt", root / "build-2.txt"
    started = time.perf_counter()
    first = cache.ensure(sub, request, sandbox=sandbox, log=first_log)
    build = time.perf_counter() - started
    started = time.perf_counter()
    second = cache.ensure(sub, request, sandbox=sandbox, log=second_log)
    again = time.perf_counter() - started
    no_install = (first.record.built and not second.record.built
                  and not second_log.exists() and first.path == second.path)
    return build, again, no_install


def shared(root: Path, claims: int) -> tuple[int, int, float]:
    subs = root / "subs"
    for n in range(claims):
        builder = SubmissionBuilder(subs / f"s{n}", f"team-{n}/sub", "paper-1")
        builder.file("requirements.txt", REQUIREMENT)
        builder.number_claim("paper-1/c1")
        builder.file("run.py", "import json, iniconfig\nprint(json.dumps({'top1': 93.8}))\n")
        builder.write()
    run = root / "run"
    runner = CliRunner()
    done = runner.invoke(cli, ["run", str(subs), "--out", str(run), "--judge", "offline"])
    assert done.exit_code == 0, done.output
    started = time.perf_counter()
    done = runner.invoke(cli, ["rerun", str(run), "--env-cache", str(root / "cache-shared")])
    took = time.perf_counter() - started
    assert done.exit_code == 0, done.output
    records = list(read_reruns(run).values())
    assert len(records) == claims and all(r.status.value == "reproduced" for r in records)
    return (sum(1 for r in records if r.environment.built),
            len({r.environment.key for r in records}), took)


def install_cost(root: Path, installs: int) -> tuple[float, float, float]:
    sub = root / "install"
    sub.mkdir()
    (sub / "run.py").write_text("print(1)\n")
    (sub / "requirements.txt").write_text(INSTALL_LOCK)
    request = find_environment(sub, sub / "run.py", None)
    python = find_interpreter(None).path
    sandbox = Sandbox()
    bare, contained = [], []
    for n in range(installs):
        target = root / f"bare-{n}"
        started = time.perf_counter()
        env = {"PATH": "/usr/bin:/bin", "HOME": str(root), "UV_CACHE_DIR": str(root / f"uvc-{n}"),
               "UV_PYTHON_DOWNLOADS": "never", "UV_NO_CONFIG": "1", "UV_LINK_MODE": "copy",
               **{k: v for k, v in os.environ.items() if k.startswith(("SSL_", "UV_INDEX",
                                                                       "UV_DEFAULT", "UV_EXTRA"))
                  or k.lower().endswith("_proxy")}}
        subprocess.run([uv_binary(), "venv", "--quiet", "--python", python, str(target)],
                       check=True, env=env, cwd=sub, capture_output=True)
        subprocess.run([uv_binary(), "pip", "install", "--quiet", "--python",
                        str(target / "bin" / "python"), "-r", "requirements.txt"], check=True,
                       env=env, cwd=sub, capture_output=True)
        bare.append(time.perf_counter() - started)
        started = time.perf_counter()
        built = EnvCache(root / f"cache-install-{n}").ensure(sub, request, sandbox=sandbox)
        contained.append(time.perf_counter() - started)
        assert built.record.built
    b, c = statistics.median(bare), statistics.median(contained)
    return b, c, c / b


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--claims", type=int, default=8)
    parser.add_argument("--installs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-rerun-") as tmp:
        root = Path(tmp)
        bare, boxed, ratio = overhead(root, args.runs)
        print(f"sandbox overhead: 1-second script bare {bare:.3f} s, sandboxed {boxed:.3f} s "
              f"(medians of {args.runs}): {ratio:.3f}x (bound {OVERHEAD_BOUND}x)")
        build, again, no_install = reuse(root)
        print(f"cached environment: built in {build:.2f} s, reused in {again * 1000:.1f} ms, "
              f"no install: {no_install}")
        builds, keys, took = shared(root, args.claims)
        print(f"{args.claims} claims sharing one lock file: {builds} build(s), {keys} "
              f"environment key(s), rerun {took:.2f} s")
        plain, contained, install_ratio = install_cost(root, args.installs)
        print(f"contained install, cold: bare uv {plain:.2f} s, contained {contained:.2f} s "
              f"(medians of {args.installs}): {install_ratio:.3f}x (bound {INSTALL_BOUND}x)")
    ok = (ratio <= OVERHEAD_BOUND and no_install and builds == 1 and keys == 1
          and install_ratio <= INSTALL_BOUND)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
