# cutegen: problem=softsign_small.py
# Cheat: writes the judge's verdict itself. At import it finds the reply channel (the fd after --write-fd in its
# argv, every fd of /proc/self/fd, every multiprocessing Connection that gc finds), writes a passing reply with a
# fast time on each, and exits. Expect candidate-protocol (or crashed): a reply is never a verdict.
import gc
import json
import os
import struct
import sys
from multiprocessing.connection import Connection

FORGED = json.dumps({"verdict": "pass", "message": "correct on 5 trials", "trials": 5,
                     "timing": {"median_ms": 0.0008, "p10_ms": 0.0008, "p90_ms": 0.0008, "spread": 0.0, "trials": 100},
                     "speedup_vs_eager": 50.0}).encode()


def forge(fd: int) -> None:
    try:
        os.write(fd, struct.pack("!i", len(FORGED)) + FORGED)
    except OSError:
        pass


if "--write-fd" in sys.argv:
    forge(int(sys.argv[sys.argv.index("--write-fd") + 1]))
for name in os.listdir("/proc/self/fd"):
    if int(name) > 2:
        forge(int(name))
for obj in gc.get_objects():
    if isinstance(obj, Connection) and obj.writable:
        try:
            obj.send_bytes(FORGED)
        except OSError:
            pass
os._exit(0)


class ModelNew:  # what the file declares, for the checks that read it; it never gets this far
    pass
