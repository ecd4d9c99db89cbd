"""Reading a Trackio logbook's files: where its root is, its pages in order, each page's cells.

Needs no trackio installed: the grammar is small. A page is `# Title` then cells, each
`---` / `<!-- trackio-cell` / one line of JSON / `-->` / a Markdown body up to the next cell.
Text before the first cell is kept as a markdown cell of its own (`preamble`); a page with no
cell marker at all is one markdown cell; a cell header whose `-->` never comes is read up to
its JSON line, with a warning. A page that does not parse is an error on that page.

Which pages are current: the index's links (`[Title](#/slug)`, `pages/<slug>/page.md`) give the
order, else `logbook.json`'s tree, else the folder listing. When the index and `logbook.json`
disagree and `logbook.json` was updated after every cell of the index, `logbook.json` is
followed (a stale index). Pages that `logbook.json` files under a "historical" / "superseded"
/ "rejected" / "archived" page are marked historical.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judging.errors import UnsafePathError
from judging.intake.paths import MAX_TEXT_FILE_BYTES, open_confined, read_confined

#: The largest page read (a real page of repeated base64 PNG was about 1 MB).
MAX_PAGE_BYTES = 20 * 1024 * 1024
#: How deep below a workspace or mirror folder `.trackio/logbook/` may sit.
MAX_WORKSPACE_DEPTH = 3

_CELL_START = re.compile(r"^---[ \t]*\r?\n<!-- trackio-cell[ \t]*\r?\n(?P<json>[^\n]*)(?:\r?\n|\Z)"
                         r"(?P<close>-->[ \t]*(?:\r?\n|\Z))?", re.MULTILINE)
#: A link's text may hold brackets of its own ("Claim 2 (Theorem 4.1 [v2: Thm 4.3])").
_LINK_TEXT = r"\[(?P<title>(?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
_INDEX_LINK = re.compile(_LINK_TEXT + r"\((?:(?:\./)?pages/(?P<path>[A-Za-z0-9][\w.-]*)/page\.md|"
                         r"#/(?P<slug>[^)\s]+))\)")
#: A logbook.json parent whose pages are not the current ones.
_HISTORICAL = re.compile(r"(?i)(?:histor(?:y|ical)|superseded|rejected|archived?|deprecated|"
                         r"obsolete|old)\b")
_TIMESTAMP = re.compile(r'"created_at":\s*"(?P<t>\d{4}-\d{2}-\d{2}T[^"]{0,40})"')


@dataclass
class Cell:
    type: str
    """markdown, code, figure, artifact, dashboard (or preamble: text before the first cell)."""
    meta: dict[str, Any]
    body: str
    start: int
    """Offset of the cell's body in the page text."""

    @property
    def title(self) -> str:
        value = self.meta.get("title")
        return value if isinstance(value, str) else ""

    @property
    def is_run(self) -> bool:
        return self.type == "code" and "exit_code" in self.meta

    @property
    def created_at(self) -> str | None:
        """The cell's ISO timestamp as written (they sort as text), when it has one."""
        value = self.meta.get("created_at")
        return value if isinstance(value, str) and re.match(r"\d{4}-\d{2}-\d{2}T", value) \
            else None


@dataclass
class Page:
    slug: str
    path: Path
    title: str = ""
    text: str = ""
    cells: list[Cell] = field(default_factory=list)
    error: str | None = None
    has_markers: bool = True
    listed: bool = True
    """The followed order (index, logbook.json or folder listing) lists the page."""
    historical: bool = False
    """logbook.json files the page under a historical / superseded / rejected parent."""
    manifest_title: str = ""
    """The page's title in logbook.json (or the index's link text), when there is one."""
    origin: str | None = None
    """The file shown as the claim's origin when it is not `pages/<slug>/page.md` (a Space's
    `README.md`)."""
    warnings: list[str] = field(default_factory=list)

    @property
    def newest(self) -> str | None:
        """The latest cell timestamp of the page (None: no cell has one)."""
        times = [c.created_at for c in self.cells if c.created_at]
        return max(times) if times else None


@dataclass
class Logbook:
    root: Path
    """The folder holding pages/index.md (or pages/)."""
    folder: Path
    """The folder given (a published logbook is its own root; a workspace holds .trackio/)."""
    manifest: dict[str, Any]
    metadata: dict[str, Any]
    readme: str
    index_text: str
    title: str
    pages: list[Page]
    order_from: str
    """index | logbook.json | folder listing"""
    warnings: list[str] = field(default_factory=list)
    index_links: list[tuple[str, str]] = field(default_factory=list)
    """(link text, slug) of every page the index links, in index order (missing pages too)."""
    absent: list[str] = field(default_factory=list)
    """Slugs the followed order lists whose page folder is not there."""
    readme_outside: bool = False
    """`readme` is a repository's README around the logbook (not the published Space's own)."""
    index_origin: str | None = None
    """The file shown for the index page when it is not `pages/index.md` (a Space's README)."""


def _is_root(folder: Path) -> bool:
    pages = folder / "pages"
    return pages.is_dir() and ((pages / "index.md").is_file() or (folder / "logbook.json").is_file()
                               or any(pages.glob("*/page.md")))


def find_logbook_root(folder: Path) -> Path | None:
    """The logbook root in `folder`: the folder itself when it is a published logbook
    (pages/index.md), else the shallowest `.trackio/logbook/` or published-logbook folder
    (a mirror's `logbook/`, a monorepo's `submissions/<paper>/`) at depth <= 3 below it; at one
    depth a `.trackio/logbook/` comes first, then folders in name order."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    if _is_root(folder):
        return folder
    level = [folder]
    for depth in range(MAX_WORKSPACE_DEPTH + 1):
        found = sorted(d / ".trackio" / "logbook" for d in level
                       if _is_root(d / ".trackio" / "logbook"))
        if found:
            return found[0]
        if depth > 0:
            published = sorted(d for d in level if _is_root(d))
            if published:
                return published[0]
        level = [c for d in level for c in sorted(_subdirs(d))]
    return None


def _subdirs(folder: Path) -> list[Path]:
    try:
        return [c for c in folder.iterdir() if c.is_dir() and not c.is_symlink()
                and c.name not in (".git", "node_modules", ".venv", "__pycache__")]
    except OSError:
        return []


def _read_bytes(path: Path, inside: Path, limit: int, warnings: list[str] | None
                ) -> bytes | None:
    """A logbook file read confined to `inside` (`read_confined`: no link out, a regular file, at
    most `limit` bytes; a FIFO never blocks), or None: not there, or refused with one warning in
    our words (never the file's text)."""
    try:
        relative = path.relative_to(inside).as_posix()
    except ValueError:
        return None
    try:
        return read_confined(inside, relative, limit=limit, links=True)
    except FileNotFoundError:
        return None
    except UnsafePathError as exc:
        reason = str(exc)
    except OSError as exc:
        reason = f"cannot be read ({exc.strerror or type(exc).__name__})"
    if warnings is not None:
        warnings.append(f"{relative}: {reason}: not read")
    return None


def _read_json(path: Path, inside: Path, warnings: list[str] | None = None) -> dict[str, Any]:
    raw = _read_bytes(path, inside, MAX_TEXT_FILE_BYTES, warnings)
    try:
        data = json.loads(raw.decode("utf-8")) if raw is not None else None
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _read_text(path: Path, inside: Path, warnings: list[str] | None = None) -> str:
    raw = _read_bytes(path, inside, MAX_PAGE_BYTES, warnings)
    return raw.decode("utf-8", errors="replace") if raw is not None else ""


def parse_cells(text: str, warnings: list[str] | None = None) -> tuple[str, list[Cell], bool]:
    """(title, cells, whether any cell marker was found). Raises ValueError on a cell header
    whose JSON does not parse. A header whose `-->` never comes is read up to its JSON line and
    noted in `warnings`."""
    title_match = re.match(r"\A\s*#[ \t]+(?P<t>[^\n]*)\n?", text)
    title = title_match.group("t").strip() if title_match else ""
    head_end = title_match.end() if title_match else 0
    matches = list(_CELL_START.finditer(text, head_end))
    cells: list[Cell] = []
    first = matches[0].start() if matches else len(text)
    preamble = text[head_end:first]
    if preamble.strip():
        cells.append(Cell(type="preamble" if matches else "markdown", meta={},
                          body=preamble, start=head_end))
    for i, match in enumerate(matches):
        meta, trailing = _header_json(match.group("json"),
                                      text.count("\n", 0, match.start("json")) + 1, warnings)
        if not isinstance(meta, dict):
            raise ValueError("a cell header must be a JSON object")
        if match.group("close") is None and warnings is not None:
            line = text.count("\n", 0, match.start("json")) + 1
            warnings.append(f"line {line}: a cell header is never closed with '-->'; its body "
                            f"is read from the next line")
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        cell_type = meta.get("type") if isinstance(meta.get("type"), str) else "markdown"
        body = text[match.end():end]
        cells.append(Cell(type=cell_type, meta=meta,
                          body=f"{trailing}\n{body}" if trailing else body, start=match.end()))
    return title, cells, bool(matches)


def _header_json(line_text: str, line: int, warnings: list[str] | None
                 ) -> tuple[Any, str]:
    """A cell header's JSON and any text a generator left after it on the line (a damaged
    header: flagged in `warnings`, the text kept at the head of the body so nothing is lost).
    Raises ValueError when the line does not open with JSON."""
    try:
        return json.loads(line_text), ""
    except ValueError as exc:
        error = exc
    try:
        meta, end = json.JSONDecoder().raw_decode(line_text.lstrip())
    except ValueError:
        raise ValueError(f"line {line}: the cell header is not one line of JSON ({error})"
                         ) from None
    trailing = line_text.lstrip()[end:].strip()
    if warnings is not None:
        warnings.append(f"line {line}: a damaged cell header (text after its JSON: "
                        f"{trailing[:60]!r}); the header is read up to its JSON and the text "
                        f"kept in the cell's body")
    return meta, trailing


def read_page(slug: str, path: Path, root: Path | None = None) -> Page:
    page = Page(slug=slug, path=path)
    if root is not None and not _inside(path, root):
        page.error = "the page is a link leaving the logbook: not read"
        return page
    try:
        if root is not None:  # confined: no link out, a regular file, never blocking
            with open_confined(root, path.relative_to(root).as_posix(), links=True) as stream:
                size = os.fstat(stream.fileno()).st_size
                raw = stream.read(MAX_PAGE_BYTES + 1) if size <= MAX_PAGE_BYTES else b""
        else:
            size = path.stat().st_size
            raw = path.read_bytes() if size <= MAX_PAGE_BYTES else b""
        size = max(size, len(raw))
        if size > MAX_PAGE_BYTES:
            page.error = f"page is {size:,} bytes, over the limit of {MAX_PAGE_BYTES:,}"
            return page
    except (UnsafePathError, ValueError) as exc:
        page.error = f"the page is refused ({exc})"
        return page
    except OSError as exc:
        page.error = f"cannot read the page: {exc.strerror or exc}"
        return page
    try:
        page.text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        page.error = f"the page is not UTF-8 (byte {exc.start})"
        return page
    try:
        page.title, page.cells, page.has_markers = parse_cells(page.text, page.warnings)
    except ValueError as exc:
        page.error = f"the page does not parse: {exc}"
    return page


def _manifest_order(manifest: dict[str, Any]) -> tuple[list[str], set[str], dict[str, str]]:
    """(slugs in tree order, the slugs that are historical, the title of each slug). A node is
    historical when its title (else slug) starts with "Historical", "Superseded", "Rejected",
    "Archived", ... or when it is filed under such a node."""
    slugs: list[str] = []
    historical: set[str] = set()
    titles: dict[str, str] = {}

    def walk(node: Any, old: bool) -> None:
        if not isinstance(node, dict):
            return
        for child in node.get("children") or []:
            if isinstance(child, dict) and isinstance(child.get("slug"), str):
                slug = child["slug"]
                title = child.get("title") if isinstance(child.get("title"), str) else ""
                slugs.append(slug)
                titles[slug] = title
                here = old or bool(_HISTORICAL.match((title or slug).strip()))
                if here:
                    historical.add(slug)
                walk(child, here)

    walk(manifest.get("root"), False)
    return slugs, historical, titles


def read_logbook(folder: Path) -> Logbook:
    folder = Path(folder)
    root = find_logbook_root(folder)
    if root is None:
        raise FileNotFoundError(f"{folder}: no logbook (pages/index.md, or .trackio/logbook/ "
                                f"within {MAX_WORKSPACE_DEPTH} folders)")
    warnings: list[str] = []
    manifest = _read_json(root / "logbook.json", folder, warnings)
    metadata = _read_json(root.parent / "metadata.json", folder, warnings) \
        if root.parent.name == ".trackio" else {}
    readme = ""
    readme_outside = False
    for candidate in (root / "README.md", root.parent.parent / "README.md", folder / "README.md"):
        if candidate.is_file() and _inside(candidate, folder):
            readme = _read_text(candidate, folder, warnings)
            readme_outside = candidate.parent != root
            break
    pages_dir = root / "pages"
    index_text = _read_text(pages_dir / "index.md", root, warnings)
    present = sorted(d.name for d in _subdirs(pages_dir) if (d / "page.md").is_file())
    warnings.extend(front_matter_warnings(readme))
    if not (pages_dir / "index.md").is_file():
        warnings.append("no pages/index.md (the logbook's front page): no title, and the page "
                        "order is taken from logbook.json or the folder listing")
    links = index_links(index_text)
    index_slugs = list(dict.fromkeys(slug for _, slug in links))
    manifest_slugs, historical, titles = _manifest_order(manifest)
    titles = {**titles, **{slug: text for text, slug in links if text.strip()}}
    index_time = max((m.group("t") for m in _TIMESTAMP.finditer(index_text)), default=None)
    updated = manifest.get("updated_at") if isinstance(manifest.get("updated_at"), str) else None
    disagree = bool(index_slugs and manifest_slugs) and \
        [s for s in index_slugs if s in present] != [s for s in manifest_slugs if s in present]
    if index_slugs and not (disagree and updated and index_time and updated > index_time):
        order, order_from = index_slugs, "index"
    elif manifest_slugs:
        order, order_from = manifest_slugs, "logbook.json"
    else:
        order, order_from = present, "folder listing"
    absent = [slug for slug in order if slug not in present]
    for slug in absent:
        warnings.append(f"dangling link: {order_from} lists page {slug!r}, which is not in "
                        f"pages/")
    orphans = [slug for slug in present if slug not in order]
    for slug in orphans:
        warnings.append(f"orphan page: pages/{slug}/page.md is not listed in the {order_from}")
    if disagree:
        followed = ("logbook.json is followed: it was updated after the index"
                    if order_from == "logbook.json" else "the index is followed")
        warnings.append(f"index.md and logbook.json list the pages in different orders (or "
                        f"different pages); {followed}")
    pages = [read_page(slug, pages_dir / slug / "page.md", root) for slug in order
             if slug in present]
    pages += [read_page(slug, pages_dir / slug / "page.md", root) for slug in orphans]
    for page in pages:
        page.listed = page.slug not in orphans
        page.historical = page.slug in historical
        page.manifest_title = titles.get(page.slug, "")
        if page.error:
            warnings.append(f"page {page.slug}: {page.error}")
        warnings += [f"page {page.slug}: {w}" for w in page.warnings]
    title_match = re.search(r"^#[ \t]+(.+)$", index_text, re.MULTILINE)
    title = (title_match.group(1).strip() if title_match else "") or \
        str(manifest.get("title") or "")
    return Logbook(root=root, folder=folder, manifest=manifest, metadata=metadata, readme=readme,
                   index_text=index_text, title=title, pages=pages, order_from=order_from,
                   warnings=warnings, index_links=links, absent=absent,
                   readme_outside=readme_outside)


def front_matter_warnings(readme: str) -> list[str]:
    """What is wrong with a README's front matter (the Space's card: the Hub reads it as YAML
    and refuses a Space whose card is not): not YAML, or not a mapping. Its tags are still read
    line by line (`paper_id`), so that a logbook is not lost to a colon in its title."""
    from judging._yaml import parse_document
    from judging.errors import InputFileError

    match = re.match(r"\A---\n(?P<y>.*?)\n---", readme, re.DOTALL)
    if match is None:
        return []
    try:
        doc = parse_document(match.group("y"), path="README.md front matter")
    except InputFileError as exc:
        return [f"the README's front matter is not YAML ({exc}): the Hub would refuse this card "
                f"(quote a value that holds ': '); its tags are read line by line"]
    if not isinstance(doc.data, dict):
        return ["the README's front matter is not a mapping of keys (the Hub would refuse this "
                "card)"]
    return []


def index_links(text: str) -> list[tuple[str, str]]:
    """(link text, slug) of the page links of an index, in order: `[Title](#/slug)` and
    `[Title](pages/slug/page.md)`, wherever they stand (a claims table before `## Pages` too)."""
    out: list[tuple[str, str]] = []
    for match in _INDEX_LINK.finditer(text):
        out.append((match.group("title").strip(), match.group("slug") or match.group("path")))
    return out


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True

