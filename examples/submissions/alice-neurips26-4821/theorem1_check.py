"""Numerical check of Theorem 1 (neurips26-4821) on a small model.

Theorem 1: min_t E||grad f(theta_t)||^2 <= (2 L (f(theta_0) - f*) + sigma^2) / sqrt(sum_t rho_t).
We estimate L by power iteration on Hessian-vector products, sigma^2 from per-batch gradients,
f* by a long dense run, and report LHS / RHS per seed.
"""
import torch
from torch import nn

from sparse_warmup import SparseWarmup
from vit import vit_tiny  # 2 layers, width 128, ~1M parameters

STEPS = 2000


def hvp_power_iteration(model, loss_fn, batch, iters=20):
    params = [p for p in model.parameters() if p.requires_grad]
    v = [torch.randn_like(p) for p in params]
    lam = 0.0
    for _ in range(iters):
        loss = loss_fn(model, batch)
        grads = torch.autograd.grad(loss, params, create_graph=True)
        hv = torch.autograd.grad(grads, params, grad_outputs=v)
        lam = torch.sqrt(sum((h * h).sum() for h in hv)).item()
        v = [h / lam for h in hv]
    return lam


def run(seed, loader, loss_fn, f_star):
    torch.manual_seed(seed)
    model = vit_tiny().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    warm = SparseWarmup(model, start_density=0.1, final_density=1.0, warmup_steps=STEPS // 2)
    f0 = None
    grad_sq, rho_sum, sigma_sq, L = [], 0.0, 0.0, 0.0
    for step, batch in zip(range(STEPS), loader):
        loss = loss_fn(model, batch)
        f0 = loss.item() if f0 is None else f0
        opt.zero_grad()
        loss.backward()
        grad_sq.append(sum((p.grad ** 2).sum() for p in model.parameters()).item())
        rho_sum += warm.density(step)
        warm.mask_gradients(step)
        opt.step()
        if step % 200 == 0:
            L = max(L, hvp_power_iteration(model, loss_fn, batch))
            sigma_sq = max(sigma_sq, warm.gradient_variance(model, loss_fn, loader, n=16))
    lhs = min(grad_sq)
    rhs = (2 * L * (f0 - f_star) + sigma_sq) / rho_sum ** 0.5
    print(f"seed {seed} L_hat {L:.2f} sigma2_hat {sigma_sq:.3f} lhs {lhs:.4f} rhs {rhs:.4f} "
          f"ratio {lhs / rhs:.2f}")
    return lhs / rhs
