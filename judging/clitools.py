"""Helpers shared by the command-line modules: consoles and one-line errors."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from rich.console import Console
from rich.markup import escape

from .errors import JudgingError

console = Console()
err_console = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])


def friendly_errors(func: F) -> F:
    """Turn the package's own errors into one clear line and exit code 1 (no traceback)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except JudgingError as exc:
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False,
                              soft_wrap=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]
