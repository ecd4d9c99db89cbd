"""A measuring worker that fails before it runs our code (forked as the pool shuts down, its
pool's semaphores already released: FileNotFoundError while unpickling them) says so in one line,
not with the forkserver's traceback (a clean-clone `make test` once saw that traceback at the end
of a hostile-input run whose claims were all measured)."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_a_worker_that_cannot_start_says_so_in_one_line(tmp_path):
    script = textwrap.dedent("""
        import os
        from judging.run.pool import _context

        class Released:
            # Unpickled in the new worker: a semaphore the pool already released.
            def __reduce__(self):
                return (os.stat, ("/nonexistent/pebble-semaphore",))

        if __name__ == "__main__":
            context = _context()
            worker = context.Process(target=print, args=(Released(),))
            worker.start()
            worker.join(60)
            print("exit", worker.exitcode)
    """)
    path = tmp_path / "start.py"
    path.write_text(script, encoding="utf-8")
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert "exit 1" in done.stdout, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == ["judging: a measuring worker could not start (FileNotFoundError: [Errno 2] "
                     "No such file or directory: '/nonexistent/pebble-semaphore')"], lines
