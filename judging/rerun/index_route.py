"""The install step's only way out of its network namespace: a proxy on this machine that reaches
the package index and nothing else.

The install runs in bubblewrap's own network namespace (a loopback and nothing else). Its way
out is a Unix socket in a private folder bound read-only into the sandbox, where a proxy of ours
listens on the host side; inside, a tiny relay (run by the environment's own interpreter) turns
127.0.0.1:RELAY_PORT into that socket, and uv is told HTTPS_PROXY=http://127.0.0.1:RELAY_PORT.
The proxy allows

- `CONNECT host:port` only to an index host over https: pypi.org and files.pythonhosted.org on
  443, and the host:port of each https index the organizer names (UV_INDEX_URL,
  UV_DEFAULT_INDEX, UV_EXTRA_INDEX_URL, UV_INDEX);
- a plain `GET http://host:port/...` only to an http index the organizer names;

and refuses everything else (every other host, every other port, every other method), and any
name that resolves to a loopback, link-local, unspecified or multicast address or to one of this
machine's own addresses (an index host that DNS or /etc/hosts points back at this machine)
unless the organizer named exactly that host and port as an index. It connects to the address
it checked (no second lookup). When the organizer's own HTTPS_PROXY/HTTP_PROXY is set (and its
NO_PROXY does not name the host), the proxy chains to it, credentials included: they stay on
this machine, never in the sandbox.

Hand-written because no well-kept library is a forward proxy with a host allow-list that
listens on a Unix socket and can be embedded in this process (proxy.py runs its own process
model and plugins, mitmproxy intercepts TLS): it is small and bounded (MAX_CONNECTIONS at once,
a header size limit, a timeout on every connect and on every idle stream).
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import os
import shutil
import socket
import tempfile
import threading
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: The index hosts uv uses by default (https, port 443).
DEFAULT_INDEX_HOSTS = ("pypi.org", "files.pythonhosted.org")
#: The organizer's settings that name indexes (whitespace-separated URLs; UV_INDEX entries may
#: be `name=url`).
INDEX_SETTINGS = ("UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL", "UV_INDEX")
#: Where the route's folder (socket and relay) is mounted in the sandbox.
ROUTE_MOUNT = "/run/judging-index"
#: The relay's port inside the sandbox's own network namespace (nothing else listens there).
RELAY_PORT = 3128
#: Connections at once through the proxy: uv opens a few dozen at most.
MAX_CONNECTIONS = 64
#: A request's header block (the request line and headers) larger than this is refused.
MAX_HEADER_BYTES = 16 * 1024
#: Seconds for the request's header block to arrive, for a connect, and without a byte either
#: way on an open stream: a stalled client or index ends its connection.
HEADER_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 30.0
IDLE_TIMEOUT_S = 300.0
#: Refusals kept to report in the build log.
MAX_REFUSALS = 20
REFUSED_SHOWN_CHARS = 120


@dataclass(frozen=True)
class Destination:
    host: str
    port: int
    scheme: str
    """"https": CONNECT only; "http": a plain GET/HEAD only."""
    named: bool = False
    """Named by the organizer's settings as an index: its address is not checked."""


class Refused(Exception):
    """A request the route does not carry (the reason, in our words)."""


def _index_urls(environ: dict[str, str]) -> list[str]:
    urls = []
    for name in INDEX_SETTINGS:
        for entry in environ.get(name, "").split():
            if "=" in entry.split("://", 1)[0]:  # UV_INDEX's `name=url`
                entry = entry.split("=", 1)[1]
            urls.append(entry)
    return urls


def allowed_destinations(environ: dict[str, str] | None = None) -> dict[tuple[str, int],
                                                                         Destination]:
    """The (host, port) pairs the install may reach: the default index hosts and the indexes
    the organizer names (a file:// index is on this machine: the sandbox cannot see it)."""
    environ = dict(os.environ if environ is None else environ)
    found = {(host, 443): Destination(host, 443, "https") for host in DEFAULT_INDEX_HOSTS}
    for url in _index_urls(environ):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            continue
        port = parts.port or (443 if parts.scheme == "https" else 80)
        found[(parts.hostname.lower(), port)] = Destination(parts.hostname.lower(), port,
                                                            parts.scheme, named=True)
    return found


def _own_address(address: str) -> bool:
    """Whether `address` is one of this machine's (the kernel lets a socket bind only to those)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((address, 0))
        except OSError:
            return False
    return True


def forbidden_address(address: str) -> str | None:
    """Why the proxy does not connect to `address` (None: it may)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for test, words in ((ip.is_loopback, "a loopback address"),
                        (ip.is_link_local, "a link-local address"),
                        (ip.is_unspecified, "the unspecified address"),
                        (ip.is_multicast, "a multicast address")):
        if test:
            return words
    if _own_address(str(ip)):
        return "an address of this machine"
    return None


def _shown(text: str) -> str:
    """A name the install asked for, as it may be shown: printable ASCII, cut short."""
    clean = "".join(c if 32 < ord(c) < 127 else "?" for c in text)
    return clean[:REFUSED_SHOWN_CHARS]


@dataclass
class _Upstream:
    """The organizer's own proxy for one scheme."""

    host: str
    port: int
    authorization: bytes | None

    @classmethod
    def parse(cls, url: str) -> _Upstream | None:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        if parts.scheme not in ("http", "") or not parts.hostname:
            return None  # an https:// or socks proxy is not chained: refused with the reason
        auth = None
        if parts.username is not None:
            token = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            auth = b"Basic " + base64.b64encode(token.encode())
        return cls(parts.hostname, parts.port or 80, auth)


@dataclass
class IndexRoute:
    """The proxy, running in a thread of this process for the length of one install (`with`)."""

    destinations: dict[tuple[str, int], Destination]
    proxies: dict[str, str] = field(default_factory=dict)
    """The organizer's proxies (urllib's `getproxies_environment` form)."""
    refusals: list[str] = field(default_factory=list)
    _folder: Path | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _server: asyncio.AbstractServer | None = None
    _active: int = 0

    @classmethod
    def from_environment(cls) -> IndexRoute:
        return cls(allowed_destinations(), proxies=urllib.request.getproxies_environment())

    # --- what the sandbox gets --------------------------------------------------------------

    @property
    def folder(self) -> Path:
        assert self._folder is not None, "the route is not open"
        return self._folder

    @property
    def env(self) -> dict[str, str]:
        """The proxy settings of the install (every client's spelling)."""
        url = f"http://127.0.0.1:{RELAY_PORT}"
        names = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")
        return {**{n: url for n in names}, **{n.lower(): url for n in names}}

    def start_relay(self, python: str) -> str:
        """The shell line that starts the relay in the sandbox (it returns once it listens)."""
        return (f'"{python}" -I -S {ROUTE_MOUNT}/relay.py {ROUTE_MOUNT}/proxy.sock {RELAY_PORT} '
                f'|| {{ echo "judging: the route to the package index did not start" >&2; '
                f'exit 1; }}\n')

    # --- lifetime ---------------------------------------------------------------------------

    def __enter__(self) -> IndexRoute:
        self._folder = Path(tempfile.mkdtemp(prefix="judging-index-"))
        # the sandbox's uid enters the folder and connects to the socket; it cannot write there
        # (the folder is mounted read-only)
        self._folder.chmod(0o755)
        relay = self._folder / "relay.py"
        relay.write_text(_RELAY)
        relay.chmod(0o644)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="judging-index-route")
        self._thread.start()
        socket_path = self._folder / "proxy.sock"
        try:
            self._server = asyncio.run_coroutine_threadsafe(asyncio.start_unix_server(
                self._handle, path=str(socket_path), limit=MAX_HEADER_BYTES), self._loop
            ).result(timeout=CONNECT_TIMEOUT_S)
            socket_path.chmod(0o666)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        assert self._loop is not None and self._thread is not None
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        current = asyncio.current_task()
        tasks = [t for t in asyncio.all_tasks() if t is not current]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # --- the proxy --------------------------------------------------------------------------

    def _refuse(self, what: str, why: str) -> Refused:
        line = f"{_shown(what)}: {why}"
        if len(self.refusals) < MAX_REFUSALS and line not in self.refusals:
            self.refusals.append(line)
        return Refused(why)

    def _check(self, host: str, port: int, scheme: str) -> Destination:
        destination = self.destinations.get((host.lower().rstrip("."), port))
        if destination is None or destination.scheme != scheme:
            raise self._refuse(f"{host}:{port}", "not a package index host")
        return destination

    def _upstream(self, destination: Destination) -> _Upstream | None:
        url = self.proxies.get(destination.scheme) or self.proxies.get("all")
        if not url or urllib.request.proxy_bypass_environment(destination.host, self.proxies):
            return None
        upstream = _Upstream.parse(url)
        if upstream is None:
            raise self._refuse(destination.host, "the organizer's proxy is not an http:// proxy")
        return upstream

    async def _resolve(self, destination: Destination) -> list[str]:
        loop = asyncio.get_running_loop()
        try:
            infos = await asyncio.wait_for(loop.getaddrinfo(
                destination.host, destination.port, type=socket.SOCK_STREAM), CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            raise self._refuse(destination.host, f"cannot be resolved ({exc})") from None
        addresses = [info[4][0] for info in infos]
        if not destination.named:
            for address in addresses:
                why = forbidden_address(address)
                if why is not None:
                    raise self._refuse(destination.host, f"resolves to {why}")
        return list(dict.fromkeys(addresses))

    async def _open(self, destination: Destination, head: bytes | None):
        """A stream to the destination (through the organizer's proxy when one is set); `head`:
        a plain-http request to send first (None: a CONNECT tunnel)."""
        upstream = self._upstream(destination)
        hosts, port = (([upstream.host], upstream.port) if upstream is not None
                       else (await self._resolve(destination), destination.port))
        reader = writer = None
        for host in hosts:  # the addresses checked, in the resolver's order
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port),
                                                        CONNECT_TIMEOUT_S)
                break
            except (OSError, TimeoutError) as exc:
                failure = exc
        if reader is None or writer is None:
            raise self._refuse(destination.host, f"cannot be reached ({failure})")
        auth = (b"Proxy-Authorization: " + upstream.authorization + b"\r\n"
                if upstream is not None and upstream.authorization else b"")
        if head is not None:
            if upstream is not None:  # the absolute form, to the organizer's proxy
                head = head.replace(b"\r\n", b"\r\n" + auth, 1)
            writer.write(head)
        elif upstream is not None:
            target = f"{destination.host}:{destination.port}".encode()
            writer.write(b"CONNECT " + target + b" HTTP/1.1\r\nHost: " + target + b"\r\n" + auth
                         + b"\r\n")
            reply = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), CONNECT_TIMEOUT_S)
            if reply.split(b" ", 2)[1:2] != [b"200"]:
                writer.close()
                raise self._refuse(destination.host, "the organizer's proxy refused it")
        return reader, writer

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._active >= MAX_CONNECTIONS:
            writer.close()
            return
        self._active += 1
        remote = None
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEADER_TIMEOUT_S)
            remote, tunnel = await self._route(head)
            if tunnel:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await asyncio.gather(_pump(reader, remote[1]), _pump(remote[0], writer))
            else:  # one plain request per connection: its response, marked to close
                response = await asyncio.wait_for(remote[0].readuntil(b"\r\n\r\n"),
                                                  IDLE_TIMEOUT_S)
                writer.write(_closing(response))
                await _pump(remote[0], writer)
        except Refused as exc:
            body = f"judging: refused: {exc}\n".encode()
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: "
                         + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
        except asyncio.CancelledError:
            pass  # the route is closing (the install ended): its connections end with it
        except (OSError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                ValueError, UnicodeDecodeError):
            pass  # a broken or stalled client: its connection ends
        finally:
            self._active -= 1
            for stream in (writer, remote[1] if remote else None):
                if stream is not None:
                    stream.close()

    async def _route(self, head: bytes):
        """Where a request goes: ((reader, writer), whether it is a CONNECT tunnel)."""
        line, _, rest = head.partition(b"\r\n")
        method, target, version = line.decode("ascii").split(" ")
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            destination = self._check(host.strip("[]"), int(port), "https")
            return await self._open(destination, None), True
        parts = urlsplit(target)
        if method not in ("GET", "HEAD") or parts.scheme != "http" or not parts.hostname:
            raise self._refuse(target, f"{_shown(method)} is not a request to a package index")
        destination = self._check(parts.hostname, parts.port or 80, "http")
        headers = [h for h in rest.split(b"\r\n") if h and not h.lower().startswith(
            (b"proxy-", b"connection:", b"keep-alive:"))]
        upstream = self._upstream(destination)
        path = target if upstream is not None else (parts.path or "/") + (
            f"?{parts.query}" if parts.query else "")
        request = (f"{method} {path} {version}\r\n".encode() + b"\r\n".join(headers)
                   + b"\r\nConnection: close\r\n\r\n")
        return await self._open(destination, request), False


def _closing(head: bytes) -> bytes:
    """A response's header block, saying the connection closes after it."""
    lines = [line for line in head[:-4].split(b"\r\n") if not line.lower().startswith(
        (b"connection:", b"keep-alive:", b"proxy-connection:"))]
    return b"\r\n".join([*lines, b"Connection: close"]) + b"\r\n\r\n"


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy one direction until its end (then half-close), or until it is idle too long."""
    try:
        chunk = await asyncio.wait_for(reader.read(65536), IDLE_TIMEOUT_S)
        while chunk:
            writer.write(chunk)
            await writer.drain()
            chunk = await asyncio.wait_for(reader.read(65536), IDLE_TIMEOUT_S)
        if writer.can_write_eof():
            writer.write_eof()
    except (OSError, TimeoutError):
        writer.close()


# The relay inside the sandbox (standard library only, Python 3.8+): 127.0.0.1:PORT to the
# route's Unix socket. It returns once it listens (the install starts after), and lives on in
# the background until the sandbox's pid namespace ends.
_RELAY = """import os, socket, sys, threading
path, port = sys.argv[1], int(sys.argv[2])
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port))
server.listen(64)
if os.fork():
    os._exit(0)
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
slots = threading.BoundedSemaphore(SLOTS)

def pump(source, target):
    try:
        data = source.recv(65536)
        while data:
            target.sendall(data)
            data = source.recv(65536)
        target.shutdown(socket.SHUT_WR)
    except OSError:
        for s in (source, target):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

def serve(client):
    try:
        upstream = socket.socket(socket.AF_UNIX)
        upstream.connect(path)
        back = threading.Thread(target=pump, args=(upstream, client))
        back.start()
        pump(client, upstream)
        back.join()
        upstream.close()
    except OSError:
        pass
    finally:
        client.close()
        slots.release()

for _ in iter(int, 1):  # until the sandbox ends
    client, _ = server.accept()
    if slots.acquire(blocking=False):
        threading.Thread(target=serve, args=(client,), daemon=True).start()
    else:
        client.close()
""".replace("SLOTS", str(MAX_CONNECTIONS))
