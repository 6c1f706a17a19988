# cutegen: problem=softsign_small.py
# Cheat: a wrong kernel (x * 0.5) that, at import, finds the class named `Model` among the live objects and gives
# its forward the same wrong function, so a judge in this process compares the kernel with itself (the fp64 truth
# included). Expect mismatch: the judge's Model lives in another process.
import gc

import torch.nn as nn


def wrong(self, x):
    return x * 0.5


for obj in gc.get_objects():
    if isinstance(obj, type) and obj.__name__ == "Model" and issubclass(obj, nn.Module):
        obj.forward = wrong
for name, module in list(__import__("sys").modules.items()):
    if getattr(module, "Model", None) is not None and name.startswith("cutegen_problem"):
        module.Model.forward = wrong


class ModelNew(nn.Module):
    forward = wrong
