# SPDX-License-Identifier: MIT
"""A multilayer perceptron trained on synthetic data (a PyTorch version of the kind of Keras
tutorial FECoM measured): two hidden layers, SGD with momentum, cross-entropy, a few epochs.
Usage: python3 mlp.py [EPOCHS]. Prints the loss per epoch and the final accuracy."""
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
torch.set_num_threads(1)
epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 3

# two Gaussian blobs per class in 20 dimensions
n, d, classes = 512, 20, 4
centres = torch.randn(classes, d) * 2.0
labels = torch.randint(0, classes, (n,))
inputs = centres[labels] + torch.randn(n, d)
loader = DataLoader(TensorDataset(inputs, labels), batch_size=64, shuffle=True)


class MLP(nn.Module):
    def __init__(self, d_in, hidden, d_out):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, d_out))

    def forward(self, x):
        return self.net(x)


def make_model():
    return MLP(d, 64, classes)


def train(model, loader, epochs):
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        total = 0.0
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item() * len(xb)
        print("epoch %d loss %.4f" % (epoch + 1, total / n))


model = make_model()
train(model, loader, epochs)
with torch.no_grad():
    acc = (model(inputs).argmax(dim=1) == labels).float().mean().item()
print("accuracy %.3f" % acc)
