"""The one budget driver of every engine: a `--budget` of seconds (local, Ray) or US dollars
(HF Jobs), what was committed against it, and whether the next piece of work may start.

A piece of work that alone exceeds the budget is refused on its own; the pieces after it still
start while the budget allows (a smaller one may fit). A piece either commits what it may cost
when it starts (`admit`: HF Jobs, whose dollars are not told back), or holds it while it runs
and, once it ends, gives back what it did not spend (`hold`, then `settle`: the local and Ray
engines, whose pieces report their run time). Held amounts count as spent until settled, so
pieces in flight together never add up past the cap."""

from __future__ import annotations

from dataclasses import dataclass

from judging.errors import JudgingError

#: Floating-point slack when a sum of limits is compared with the cap (3 x 1/3 h fits in 1 h).
EPSILON = 1e-9


@dataclass(frozen=True)
class Budget:
    """A cap on what a command spends: seconds of run time (local, Ray) or US dollars (HF
    Jobs)."""

    seconds: float | None = None
    usd: float | None = None

    def describe(self) -> str:
        if self.usd is not None:
            return f"${self.usd:g}"
        return f"{(self.seconds or 0) / 3600:.3g} CPU-hours"


class BudgetUnitError(JudgingError):
    """A budget in a unit the engine does not spend (dollars for run time, or the reverse)."""


class BudgetDriver:
    """What was committed against a budget (None: no budget; every piece may start)."""

    def __init__(self, budget: Budget | None, *, usd: bool = False):
        if budget is not None and (budget.usd is not None) != usd:
            # a budget in the other unit would cap nothing: every piece would start
            raise BudgetUnitError(f"--budget {budget.describe()}: this engine spends "
                                  + ("dollars: give $5 or 5usd" if usd else
                                     "run time: give 2h, 30m or 90s"))
        self.budget = budget
        self.usd = usd
        self.spent = 0.0
        """Committed: what settled pieces spent (or started pieces may spend, `admit`)."""
        self.held = 0.0
        """What the pieces in flight hold (`hold`) until they settle."""

    @property
    def cap(self) -> float | None:
        if self.budget is None:
            return None
        return self.budget.usd if self.usd else self.budget.seconds

    def refuses(self, need: float) -> str | None:
        """Why a piece that may cost `need` (seconds at its wall-time limit, or dollars) may not
        start now (None: it may)."""
        cap = self.cap
        if cap is None:
            return None
        assert self.budget is not None
        if need > cap + EPSILON:
            what = f"${need:.2f}" if self.usd else f"{need:g} s"
            return (f"over budget: its limit {what} exceeds the budget (--budget "
                    f"{self.budget.describe()})")
        if self.spent + self.held + need > cap + EPSILON:
            return (f"over budget: --budget {self.budget.describe()} was spent before it could "
                    f"start")
        return None

    def admit(self, need: float) -> str | None:
        """`refuses`, and `need` committed when the piece may start (engines that run pieces
        at once)."""
        refused = self.refuses(need)
        if refused is None:
            self.commit(need)
        return refused

    def commit(self, amount: float) -> None:
        self.spent += amount

    def hold(self, amount: float) -> None:
        """Set `amount` aside for a piece that starts (what it may spend at most)."""
        self.held += amount

    def settle(self, held: float, spent: float) -> None:
        """A piece that held `held` ended having spent `spent`: the rest is back in the budget."""
        self.held = max(0.0, self.held - held)
        self.spent += spent

    def fits_alone(self, need: float) -> bool:
        cap = self.cap
        return cap is None or need <= cap + EPSILON

    def left_beside(self, need: float) -> float | None:
        """What the budget has left once a piece's own `need` is set aside (None: no cap)."""
        cap = self.cap
        return None if cap is None else cap - self.spent - self.held - need
