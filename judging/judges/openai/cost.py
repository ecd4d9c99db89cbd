"""What LLM calls cost: prices per model, the run's budget, and the tokens a request is expected
to take (`judging run --estimate`, which sends nothing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judging.judges.openai.endpoint import JudgeConfigError
from judging.models import TokenUsage

Price = tuple[float, float]
"""USD per million tokens: (input, output)."""

#: USD per million tokens (input, output): OpenAI list prices, 2025. Extend with --price or the
#: JUDGING_PRICES file; a model without an entry has no cost recorded (and --max-cost refuses it).
DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
}


def load_prices(extra: dict[str, Price] | None = None, *,
                prices_file: Path | None = None) -> dict[str, Price]:
    """Default prices, then `prices_file` (YAML {model: {input: X, output: Y}}; the CLI's
    --prices-file, env JUDGING_PRICES), then `extra` (from --price)."""
    prices = dict(DEFAULT_PRICES)
    path = prices_file
    if path:
        from judging._yaml import read_document
        data = read_document(Path(path), error_class=JudgeConfigError).data or {}
        try:
            for model, entry in data.items():
                prices[str(model)] = (float(entry["input"]), float(entry["output"]))
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise JudgeConfigError(f"{path}: prices must map a model to {{input: USD per 1M "
                                   f"tokens, output: USD per 1M tokens}}") from exc
    prices.update(extra or {})
    return prices


def model_price(model: str, prices: dict[str, Price], *, budget: Budget | None) -> Price | None:
    """The model's price; a budget (--max-cost) without one is a configuration error."""
    price = prices.get(model)
    if budget is not None and price is None:
        raise JudgeConfigError(f"--max-cost needs a price for {model}: give --price "
                               f"{model}=INPUT:OUTPUT (USD per million tokens)")
    return price


def tokens_cost(price: Price | None, prompt_tokens: int, completion_tokens: int) -> float | None:
    """USD for these tokens; None without a price."""
    if price is None:
        return None
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000


def usage_cost(price: Price | None, usage: TokenUsage | None) -> float | None:
    if usage is None:
        return None
    return tokens_cost(price, usage.prompt_tokens, usage.completion_tokens)


class Budget:
    """Stops new calls once `limit` USD is spent (calls already in flight still finish)."""

    def __init__(self, limit: float):
        self.limit = limit
        self.spent = 0.0

    @property
    def exhausted(self) -> bool:
        return self.spent >= self.limit

    def charge(self, cost: float | None) -> None:
        self.spent += cost or 0.0


#: Expected answer length per criterion (a rationale of two or three sentences plus the JSON
#: around it), for estimates only.
COMPLETION_TOKENS_PER_CRITERION = 150


def image_tokens(detail: str, width: int = 512, height: int = 512) -> int:
    """OpenAI's documented image cost: 85 tokens at low detail, else 85 + 170 per 512-px tile."""
    if detail == "low":
        return 85
    tiles = -(-width // 512) * -(-height // 512)
    return 85 + 170 * tiles


def prompt_tokens(messages: list[dict[str, Any]], *, detail: str) -> int:
    """The prompt tokens expected for chat messages: about 4 characters a token, plus each
    image's documented cost."""
    chars = 0
    images = 0
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            chars += len(content)
            continue
        for part in content:
            if part["type"] == "text":
                chars += len(part["text"])
            else:
                images += 1
    return chars // 4 + images * image_tokens(detail)
