"""Untrusted text made inert where it is shown: a participant's claim, a script's stderr, a
reason quoting either. Shared vocabulary: the terminal (the CLI's consoles) and Argilla's
Markdown fields use it; HTML (the report, the dashboard) is escaped by its templates.

Hand-written: rich keeps ESC (it strips only bell, backspace, CR and form feeds) and its ANSI
decoder misses OSC sequences ended by BEL; no maintained library covers C1 controls and bidi
overrides as well. Markdown has no escaping function in markdown-it or argilla.
"""

from __future__ import annotations

import re

# ESC sequences: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), DCS/SOS/PM/APC (ESC P|X|^|_ ...
# ST), and two-character escapes; C1's own CSI (0x9b) and OSC (0x9d) likewise.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?")
# What is left of C0 and C1 (newline and tab kept), DEL, and the bidirectional overrides and
# isolates that reorder what a reader sees (a "Trojan Source" line).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                       "\u2066-\u2069]")


def for_terminal(text: str) -> str:
    """`text` with no escape sequence and no control character but newline and tab: nothing
    in it moves the cursor, erases, retitles the window or reorders a line.

    >>> for_terminal("ok\\x1b]0;pwned\\x07\\x1b[2J\\x1b[1A done\\r\\u202e")
    'ok done'
    """
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


# Markdown that makes a browser fetch or follow something: images and links (`![`, `[`, `](`),
# raw HTML and autolinks (`<`), reference definitions (`]:`), bare URLs that GFM links by itself
# (`://`, `www.`), and HTML entities that spell those characters (`&`).
_MARKDOWN_ACTIVE = re.compile(r"[\\!\[\]()<>&`]|(?<=:)//|(?<=www)\.", re.IGNORECASE)


def for_markdown(text: str) -> str:
    """`text` shown as itself by a Markdown renderer: every character that could open an
    image, a link, raw HTML or an entity is backslash-escaped (CommonMark shows an escaped
    ASCII punctuation character as the character), so the reader sees the attacker's markup
    as text and the browser fetches nothing.

    >>> for_markdown("see ![x](http://a.example/p.png) <img src=x>")
    'see \\\\!\\\\[x\\\\]\\\\(http:\\\\/\\\\/a.example/p.png\\\\) \\\\<img src=x\\\\>'
    """
    cleaned = for_terminal(text)
    return _MARKDOWN_ACTIVE.sub(lambda m: "".join("\\" + c for c in m.group(0)), cleaned)
