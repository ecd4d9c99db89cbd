"""iclr27-0137 reproduction: LoRA stability sweeps on GPT-2 medium (rank, learning rate, spectrum)."""
import argparse
import json

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer

from data import wikitext2_loaders


def train_one(rank, lr, seed, steps, alpha=16.0, scaling="alpha_over_r"):
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_pretrained("gpt2-medium", torch_dtype=torch.bfloat16).cuda()
    cfg = LoraConfig(r=rank, lora_alpha=alpha, target_modules=["c_attn", "c_proj"],
                     use_rslora=(scaling == "alpha_over_sqrt_r"), lora_dropout=0.0)
    model = get_peft_model(model, cfg)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr)
    train, val = wikitext2_loaders(AutoTokenizer.from_pretrained("gpt2-medium"), block=512)
    losses = []
    for step, batch in zip(range(steps), train):
        out = model(**{k: v.cuda() for k, v in batch.items()}, labels=batch["input_ids"].cuda())
        out.loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(out.loss.item())
        if not torch.isfinite(out.loss) or out.loss.item() > 3 * min(losses):
            return {"diverged": True, "step": step, "losses": losses}
    return {"diverged": False, "losses": losses, "model": model, "val": val}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sweep", choices=["rank", "lr", "spectrum", "ppl", "similarity"], required=True)
    p.add_argument("--seeds", type=int, default=32)
    p.add_argument("--steps", type=int, default=3000)
    args = p.parse_args()
    if args.sweep == "rank":
        for r in [1, 2, 4, 8, 16, 32, 64, 128, 256]:
            runs = [train_one(r, 3e-4, s, args.steps) for s in range(args.seeds)]
            ok = sum(not x["diverged"] for x in runs)
            print(json.dumps({"rank": r, "converged": ok, "seeds": args.seeds}))


if __name__ == "__main__":
    main()
