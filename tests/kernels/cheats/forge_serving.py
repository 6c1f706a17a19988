# cutegen: problem=softsign_small.py
# Cheat: keeps serving, but forges what it answers: its forward does nothing, and every reply it could write looks
# like a call that ran. It replaces the candidate loop's reply writer so that every answer says "ok". Expect
# mismatch: a call that "ran" is still judged on the buffers it left (poison).
import torch
import torch.nn as nn
from multiprocessing.connection import Connection

_send = Connection.send_bytes


def lying(self, data, *a):
    return _send(self, b'{"ok": true, "code": 0}' if b'"code"' in data or b'"ok": false' in data else data, *a)


Connection.send_bytes = lying


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x)
