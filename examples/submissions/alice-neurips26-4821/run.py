"""Reproduce neurips26-4821: ViT-S/4 on CIFAR-10 with sparse warmup (Fig. 3/4, Tables 1-2)."""
import argparse
import math

import torch
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

from sparse_warmup import SparseWarmup  # vendored from the authors' release (commit 3f2a9c1)
from vit import vit_small_patch4


def cosine_with_warmup(step, total, warmup, base_lr):
    if step < warmup:
        return base_lr * step / warmup
    t = (step - warmup) / max(1, total - warmup)
    return base_lr * 0.5 * (1 + math.cos(math.pi * t))


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    loss = 0.0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss += nn.functional.cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(-1) == y).sum().item()
            total += y.numel()
    model.train()
    return loss / total, correct / total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--schedule", choices=["dense", "sparse"], default="sparse")
    p.add_argument("--density", type=float, default=0.1)
    p.add_argument("--width", type=int, default=384)
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--batch-size", type=int, default=256)  # paper: 1024 on 8 GPUs
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    device = "cuda"
    tf = transforms.Compose([transforms.RandomCrop(32, padding=4),
                             transforms.RandomHorizontalFlip(), transforms.ToTensor()])
    train = datasets.CIFAR10("data", train=True, download=True, transform=tf)
    test = datasets.CIFAR10("data", train=False, transform=transforms.ToTensor())
    train_loader = DataLoader(train, args.batch_size, shuffle=True, num_workers=8, drop_last=True)
    test_loader = DataLoader(test, 512, num_workers=8)

    model = vit_small_patch4(width=args.width).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    warm = SparseWarmup(model, final_density=1.0, start_density=args.density,
                        warmup_steps=4000) if args.schedule == "sparse" else None

    step = 0
    while step < args.steps:
        for x, y in train_loader:
            lr = cosine_with_warmup(step, args.steps, 4000, args.lr)
            for g in opt.param_groups:
                g["lr"] = lr
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if warm is not None:
                warm.mask_gradients(step)
            opt.step()
            step += 1
            if step % 500 == 0:
                val_loss, val_acc = evaluate(model, test_loader, device)
                print(f"step {step:5d} lr {lr:.2e} loss {loss.item():.3f} "
                      f"val_loss {val_loss:.3f} val_acc {val_acc:.3f}", flush=True)
            if step >= args.steps:
                break
    _, top1 = evaluate(model, test_loader, device)
    print(f"final top1 {100 * top1:.2f}")


if __name__ == "__main__":
    main()
