# SPDX-License-Identifier: MIT
"""A tiny transformer language model: trained on a synthetic corpus (a repeating character
pattern), then sampled greedily. Usage: python3 transformer.py [STEPS]."""
import math
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_num_threads(1)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 40

text = "the quick brown fox jumps over the lazy dog. " * 20
vocab = sorted(set(text))
stoi = {c: i for i, c in enumerate(vocab)}
data = torch.tensor([stoi[c] for c in text])
ctx, d_model = 32, 32


class TinyLM(nn.Module):
    def __init__(self, n_vocab):
        super().__init__()
        self.tok = nn.Embedding(n_vocab, d_model)
        self.pos = nn.Parameter(torch.zeros(ctx, d_model))
        layer = nn.TransformerEncoderLayer(d_model, nhead=2, dim_feedforward=64, dropout=0.0,
                                           batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, num_layers=2)
        self.head = nn.Linear(d_model, n_vocab)
        self.register_buffer("mask", torch.triu(torch.full((ctx, ctx), -math.inf), 1))

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos[:t]
        x = self.blocks(x, mask=self.mask[:t, :t])
        return self.head(x)


def batch(size=16):
    starts = torch.randint(0, len(data) - ctx - 1, (size,))
    x = torch.stack([data[s:s + ctx] for s in starts])
    y = torch.stack([data[s + 1:s + ctx + 1] for s in starts])
    return x, y


model = TinyLM(len(vocab))
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
for step in range(steps):
    x, y = batch()
    logits = model(x)
    loss = nn.functional.cross_entropy(logits.reshape(-1, len(vocab)), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if (step + 1) % 10 == 0:
        print("step %d loss %.3f" % (step + 1, loss.item()))

model.eval()
out = data[:8].tolist()
with torch.no_grad():
    for _ in range(24):
        idx = torch.tensor([out[-ctx:]])
        nxt = int(model(idx)[0, -1].argmax())
        out.append(nxt)
print("sample: %r" % "".join(vocab[i] for i in out))
