"""Reading a Trackio logbook's files: where its root is, its pages in order, each page's cells.

Needs no trackio installed: the grammar is small. A page is `# Title` then cells, each
`---` / `<!-- trackio-cell` / one line of JSON / `-->` / a Markdown body up to the next cell.
Text before the first cell is kept as a markdown cell of its own (`preamble`); a page with no
cell marker at all is one markdown cell. A page that does not parse is an error on that page.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The largest page read (a real page of repeated base64 PNG was about 1 MB).
MAX_PAGE_BYTES = 20 * 1024 * 1024
#: How deep below a workspace or mirror folder `.trackio/logbook/` may sit.
MAX_WORKSPACE_DEPTH = 3

_CELL_START = re.compile(r"^---[ \t]*\r?\n<!-- trackio-cell[ \t]*\r?\n(?P<json>[^\n]*)\r?\n"
                         r"-->[ \t]*\r?\n?", re.MULTILINE)
_INDEX_LINK = re.compile(r"\[(?P<title>[^\]]*)\]\(#/(?P<slug>[^)\s]+)\)")
_PAGE_LINK = re.compile(r"\]\((?:\.\./)?(?:#/|pages/)?(?P<slug>[A-Za-z0-9][\w.-]*)/page\.md\)|"
                        r"\]\(#/(?P<hash>[A-Za-z0-9][\w.-]*)\)")


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


@dataclass
class Page:
    slug: str
    path: Path
    title: str = ""
    text: str = ""
    cells: list[Cell] = field(default_factory=list)
    error: str | None = None
    has_markers: bool = True


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


def _is_root(folder: Path) -> bool:
    pages = folder / "pages"
    return pages.is_dir() and ((pages / "index.md").is_file() or (folder / "logbook.json").is_file()
                               or any(pages.glob("*/page.md")))


def find_logbook_root(folder: Path) -> Path | None:
    """The logbook root in `folder`: the folder itself when it is a published logbook
    (pages/index.md), else `.trackio/logbook/` at depth <= 3 below it (the shallowest wins)."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    if _is_root(folder):
        return folder
    level = [folder]
    for _ in range(MAX_WORKSPACE_DEPTH + 1):
        found = sorted(d / ".trackio" / "logbook" for d in level
                       if _is_root(d / ".trackio" / "logbook"))
        if found:
            return found[0]
        level = [c for d in level for c in sorted(_subdirs(d))]
    return None


def _subdirs(folder: Path) -> list[Path]:
    try:
        return [c for c in folder.iterdir() if c.is_dir() and not c.is_symlink()
                and c.name not in (".git", "node_modules", ".venv", "__pycache__")]
    except OSError:
        return []


def _read_json(path: Path, inside: Path | None = None) -> dict[str, Any]:
    if inside is not None and path.exists() and not _inside(path, inside):
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def parse_cells(text: str) -> tuple[str, list[Cell], bool]:
    """(title, cells, whether any cell marker was found). Raises ValueError on a cell header
    whose JSON does not parse."""
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
        try:
            meta = json.loads(match.group("json"))
        except ValueError as exc:
            line = text.count("\n", 0, match.start("json")) + 1
            raise ValueError(f"line {line}: the cell header is not one line of JSON ({exc})"
                             ) from None
        if not isinstance(meta, dict):
            raise ValueError("a cell header must be a JSON object")
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        cell_type = meta.get("type") if isinstance(meta.get("type"), str) else "markdown"
        cells.append(Cell(type=cell_type, meta=meta, body=text[match.end():end],
                          start=match.end()))
    return title, cells, bool(matches)


def read_page(slug: str, path: Path, root: Path | None = None) -> Page:
    page = Page(slug=slug, path=path)
    if root is not None and not _inside(path, root):
        page.error = "the page is a link leaving the logbook: not read"
        return page
    try:
        size = path.stat().st_size
        if size > MAX_PAGE_BYTES:
            page.error = f"page is {size:,} bytes, over the limit of {MAX_PAGE_BYTES:,}"
            return page
        raw = path.read_bytes()
    except OSError as exc:
        page.error = f"cannot read the page: {exc.strerror or exc}"
        return page
    try:
        page.text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        page.error = f"the page is not UTF-8 (byte {exc.start})"
        return page
    try:
        page.title, page.cells, page.has_markers = parse_cells(page.text)
    except ValueError as exc:
        page.error = f"the page does not parse: {exc}"
    return page


def _manifest_order(manifest: dict[str, Any]) -> list[str]:
    slugs: list[str] = []

    def walk(node: Any) -> None:
        if not isinstance(node, dict):
            return
        for child in node.get("children") or []:
            if isinstance(child, dict) and isinstance(child.get("slug"), str):
                slugs.append(child["slug"])
                walk(child)

    walk(manifest.get("root"))
    return slugs


def read_logbook(folder: Path) -> Logbook:
    folder = Path(folder)
    root = find_logbook_root(folder)
    if root is None:
        raise FileNotFoundError(f"{folder}: no logbook (pages/index.md, or .trackio/logbook/ "
                                f"within {MAX_WORKSPACE_DEPTH} folders)")
    manifest = _read_json(root / "logbook.json", folder)
    metadata = _read_json(root.parent / "metadata.json", folder) \
        if root.parent.name == ".trackio" else {}
    readme = ""
    for candidate in (root / "README.md", root.parent.parent / "README.md", folder / "README.md"):
        if candidate.is_file() and _inside(candidate, folder):
            readme = _read_text(candidate)
            break
    pages_dir = root / "pages"
    index_text = _read_text(pages_dir / "index.md") if _inside(pages_dir / "index.md", root) \
        else ""
    present = sorted(d.name for d in _subdirs(pages_dir) if (d / "page.md").is_file())
    warnings: list[str] = []
    index_slugs: list[str] = []
    for match in _INDEX_LINK.finditer(index_text):
        if match.group("slug") not in index_slugs:
            index_slugs.append(match.group("slug"))
    manifest_slugs = _manifest_order(manifest)
    if index_slugs:
        order, order_from = index_slugs, "index"
    elif manifest_slugs:
        order, order_from = manifest_slugs, "logbook.json"
    else:
        order, order_from = present, "folder listing"
    for slug in order:
        if slug not in present:
            warnings.append(f"dangling link: {order_from} lists page {slug!r}, which is not in "
                            f"pages/")
    orphans = [slug for slug in present if slug not in order]
    for slug in orphans:
        warnings.append(f"orphan page: pages/{slug}/page.md is not listed in the {order_from}")
    if index_slugs and manifest_slugs and [s for s in index_slugs if s in present] != \
            [s for s in manifest_slugs if s in present]:
        warnings.append("index.md and logbook.json list the pages in different orders (or "
                        "different pages); the index is followed")
    pages = [read_page(slug, pages_dir / slug / "page.md", root) for slug in order
             if slug in present]
    pages += [read_page(slug, pages_dir / slug / "page.md", root) for slug in orphans]
    for page in pages:
        if page.error:
            warnings.append(f"page {page.slug}: {page.error}")
    title_match = re.search(r"^#[ \t]+(.+)$", index_text, re.MULTILINE)
    title = (title_match.group(1).strip() if title_match else "") or \
        str(manifest.get("title") or "")
    return Logbook(root=root, folder=folder, manifest=manifest, metadata=metadata, readme=readme,
                   index_text=index_text, title=title, pages=pages, order_from=order_from,
                   warnings=warnings)


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def page_links(text: str) -> list[str]:
    """Slugs of other pages a page links to."""
    return [m.group("slug") or m.group("hash") for m in _PAGE_LINK.finditer(text)]
