"""Figures the reading-trace tests draw for themselves (matplotlib), as a submission's PNG bytes."""

from __future__ import annotations

import io

import numpy as np

#: The legend names the drawn chart carries (a trace must show them as read).
NAMES = ("train loss", "val loss")


def two_losses(*, legend: bool = True, dpi: int = 100) -> bytes:
    """Two decaying loss curves, named in a legend unless `legend` is False."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.linspace(0, 10, 50)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(x, np.exp(-x / 3), label=NAMES[0])
    ax.plot(x, np.exp(-x / 5) + 0.1, label=NAMES[1])
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss")
    if legend:
        ax.legend()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    plt.close(fig)
    return buffer.getvalue()
