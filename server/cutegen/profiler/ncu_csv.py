"""Reads Nsight Compute's CSV export (`ncu --import R.ncu-rep --csv --page raw`): one dict per profiled kernel.

Numbers carry thousands separators ("1,234.5"); the second row holds units; values may be "n/a".
"""

from __future__ import annotations

import csv
import io


def parse_raw_csv(text: str) -> list[dict]:
    start = text.find('"ID"')
    if start < 0:
        return []
    rows = list(csv.reader(io.StringIO(text[start:])))
    if not rows:
        return []
    header, body = rows[0], rows[1:]
    units = {}
    if body and not body[0][0].strip():  # the units row has no ID
        units = dict(zip(header, body[0]))
        body = body[1:]
    kernels = []
    for row in body:
        if len(row) != len(header):
            continue
        k = {"_units": units}
        for name, value in zip(header, row):
            k[name] = to_number(value)
        kernels.append(k)
    return kernels


def to_number(value: str):
    v = value.strip().replace(",", "")
    try:
        return int(v)
    except ValueError:
        pass
    try:
        return float(v)
    except ValueError:
        return value.strip()


def seconds(kernel: dict, metric: str = "gpu__time_duration.sum") -> float | None:
    value = kernel.get(metric)
    if not isinstance(value, (int, float)):
        return None
    unit = kernel.get("_units", {}).get(metric, "nsecond")
    return value * {"nsecond": 1e-9, "ns": 1e-9, "usecond": 1e-6, "us": 1e-6, "msecond": 1e-3, "ms": 1e-3,
                    "second": 1.0, "s": 1.0}.get(unit, 1e-9)


def byte_count(kernel: dict, metric: str) -> float:
    value = kernel.get(metric)
    if not isinstance(value, (int, float)):
        return 0.0
    unit = kernel.get("_units", {}).get(metric, "byte")
    return value * {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12, "KB": 1e3, "MB": 1e6,
                    "GB": 1e9}.get(unit, 1)
