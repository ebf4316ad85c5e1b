# SPDX-License-Identifier: MIT
"""A small convolutional network trained on synthetic 16x16 images (bright squares in one of
four quadrants; the class is the quadrant). Usage: python3 cnn.py [EPOCHS]."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_num_threads(1)
epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 2

n = 256
labels = torch.randint(0, 4, (n,))
images = torch.rand(n, 1, 16, 16) * 0.3
for i in range(n):
    r, c = divmod(int(labels[i]), 2)
    images[i, 0, r * 8 + 2:r * 8 + 6, c * 8 + 2:c * 8 + 6] += 1.0


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 4 * 4, 4)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


model = SmallCNN()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(epochs):
    perm = torch.randperm(n)
    for k in range(0, n, 32):
        idx = perm[k:k + 32]
        opt.zero_grad()
        loss = F.cross_entropy(model(images[idx]), labels[idx])
        loss.backward()
        opt.step()
    print("epoch %d loss %.4f" % (epoch + 1, loss.item()))
with torch.no_grad():
    acc = (model(images).argmax(1) == labels).float().mean().item()
print("accuracy %.3f" % acc)
