"""No silent failures at the judge's endpoint, over real HTTP on loopback:

- before the first judgment a run checks its endpoint and stops with one line naming the cause:
  connection refused, DNS, TLS (an untrusted certificate), refused credentials (401), a model
  that is not there (404);
- the reason of a call that could not connect says what happened (refused is not "timed out");
- during a run, a breaker stops it when calls keep failing the same way; a run in which every
  call failed is `failed` in run.json with the cause, and the command exits 1.
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.cli import main
from judging.errors import RunStopped
from judging.judges import JudgeConfigError, LLMOptions, check_endpoint
from judging.models import LineStatus
from judging.run import Runner, RunRequest
from judging.rundir import RunInfo, RunStore
from judging.testing.fake_openai import FakeOpenAI
from tests.conftest import REGISTRY, SUBMISSIONS, module_measure_cache

pytestmark = pytest.mark.usefixtures("shared_measurements")

CAROL = [str(SUBMISSIONS / "carol-iclr27-0137")]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def check(url: str, model: str = "fake-judge", key: str = "sk-test") -> str:
    with pytest.raises(JudgeConfigError) as raised:
        check_endpoint(LLMOptions(base_url=url, api_key=key), model, spec=f"openai:{model}")
    message = str(raised.value)
    assert "\n" not in message
    return message


def test_connection_refused() -> None:
    port = closed_port()
    message = check(f"http://127.0.0.1:{port}/v1")
    assert f"connection refused by 127.0.0.1:{port}" in message
    assert "timed out" not in message


def test_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    # The name must not leave the machine: the resolver answers "no such name" itself.
    real = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        if host == "judge.example.invalid":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    message = check("http://judge.example.invalid/v1")
    assert "DNS: the host name 'judge.example.invalid' cannot be resolved" in message


@pytest.fixture
def tls_server(tmp_path: Path):
    """An HTTPS server on loopback with a self-signed certificate no client trusts."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_tls(tls_server: str) -> None:
    message = check(tls_server)
    assert "TLS: the certificate of 127.0.0.1" in message and "not trusted" in message


def test_refused_credentials_and_a_missing_model() -> None:
    with FakeOpenAI(model_prefix_check=True) as fake:
        # Not in the model listing: one chat call of one token asks the model itself (404).
        message = check(fake.url, model="gpt-nothing")
        assert "model 'gpt-nothing' not found at" in message and "(404)" in message
        calls = fake.calls
        assert calls == 1
        check_endpoint(LLMOptions(base_url=fake.url, api_key="k"), "fake-judge",
                       spec="openai:fake-judge")  # listed: no exception, no chat call
        assert fake.calls == calls
        fake.add_fault("401", times=5)
        assert "refused the credentials (401)" in check(fake.url, model="gpt-other")


def test_the_cli_stops_before_judging_with_the_cause(tmp_path: Path) -> None:
    port = closed_port()
    result = CliRunner().invoke(main, [
        "run", *CAROL, "--out", str(tmp_path / "run"), "--judge", "openai:gpt-4.1-mini",
        "--base-url", f"http://127.0.0.1:{port}/v1", "--api-key", "sk-test"])
    assert result.exit_code == 1
    assert f"connection refused by 127.0.0.1:{port}" in result.output
    assert not (tmp_path / "run").exists()


def _request(out: Path, url: str, **llm) -> RunRequest:
    return RunRequest(sources=[str(SUBMISSIONS)], out=out, registry=REGISTRY,
                      judges=["openai:fake-judge"], concurrency=2,
                      measure_cache=module_measure_cache(),
                      llm=LLMOptions(base_url=url, api_key="sk-test", max_retries=0, timeout=5,
                                     **llm))


def test_the_endpoint_goes_away_mid_run_the_breaker_stops_it(tmp_path: Path) -> None:
    """Checked, then gone: the calls are refused (said so, not "timed out"), and after
    BREAKER_FAILURES of them in a row the run stops, failed, with the cause."""
    from judging.run.call import BREAKER_FAILURES

    out = tmp_path / "run"
    fake = FakeOpenAI().start()
    runner = Runner(_request(out, fake.url))
    runner.prepare()  # the check passes
    fake.stop()
    with pytest.raises(RunStopped, match="calls in a row failed the same way"):
        asyncio.run(runner.run())
    lines = [j for j in RunStore.open(out, create=False).latest() if j.judge != "offline"]
    failed = [j for j in lines if j.status is LineStatus.unscored and not j.final]
    assert failed and all("connection refused by 127.0.0.1" in j.reason for j in failed)
    assert not any("timed out" in j.reason for j in failed)
    assert len(failed) < BREAKER_FAILURES + 2 * 2 + 1  # stopped, not one line per claim (25)
    info = RunInfo.from_file((out / "run.json").read_bytes())
    assert info.invocations[-1].status == "failed"
    assert "connection refused" in info.invocations[-1].errors[-1]


def test_a_run_whose_every_call_failed_is_failed(tmp_path: Path) -> None:
    """Fewer calls than the breaker needs, every one a server error: failed, exit code 1."""
    with FakeOpenAI() as fake:
        fake.add_fault("500", times=100)
        result = CliRunner().invoke(main, [
            "run", *CAROL, "--out", str(tmp_path / "run"), "--judge", "openai:fake-judge",
            "--base-url", fake.url, "--api-key", "sk-test", "--max-retries", "0",
            "--concurrency", "1"])
        assert 0 < fake.calls < 12
    assert result.exit_code == 1, result.output
    assert "every call to the judge endpoint failed" in result.output
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["invocations"][-1]["status"] == "failed"
    assert "the endpoint failed (500)" in info["invocations"][-1]["errors"][-1]
