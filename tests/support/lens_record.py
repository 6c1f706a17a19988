"""Writes the profile record a GPU run of the softsign example would leave, for a copy of it elsewhere (the
VS Code end-to-end test's workspace): the H200's captured report (tests/profiler/fixtures/softsign_lines.ncu-rep)
folded by the engine through the line table of the example built here. Needs ncu_report and nvdisasm.

    python tests/support/lens_record.py WORKSPACE/softsign.cu WORKSPACE   (prints the record's path)
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "server"))

from cutegen import records  # noqa: E402
from cutegen.compile import Tier  # noqa: E402
from cutegen.profiler.line_table import find_tool, read_line_table  # noqa: E402
from cutegen.profiler.lines import Folder, fold, read_report, system_folders  # noqa: E402
from cutegen.session import Session  # noqa: E402

EXAMPLE = ROOT / "examples" / "softsign" / "softsign.cu"


def main() -> None:
    kernel = Path(sys.argv[1]).resolve()
    session = Session()  # as the editor's: its workspace folders, the state dir of the kernel's
    session.roots = [Path(a) for a in sys.argv[2:]]
    state = session.state_dir(kernel)
    builder = session.builder(kernel)
    build = builder.run(Tier.BUILD, EXAMPLE)
    if not build.ok:
        sys.exit(f"the example does not build: {build.raw_log[-1000:]}")
    tables = read_line_table(Path(build.artifact), find_tool("nvdisasm", []), find_tool("cuobjdump", []))
    data = read_report(ROOT / "tests" / "profiler" / "fixtures" / "softsign_lines.ncu-rep", None)
    if "error" in data:
        sys.exit(data["error"])
    lines = fold(data, tables, Folder({str(Path(build.artifact).parent / EXAMPLE.name): str(kernel)},
                                      system_folders(builder.toolchain)))
    print(records.write(state.path, "profile", str(kernel), {"verdict": "profiled", "kernel": str(kernel),
                                                             "message": "captured on the H200", "lines": lines}))


if __name__ == "__main__":
    main()
