"""A user's program built as users build it (`nvcc -lineinfo bench.cu` in its own folder): compute-sanitizer names
the source bare (`in bench.cu:13`), so the finding is placed by looking for that name where the program runs and
where its binary lives. Recorded on an H100 (recorded/program/); the GPU run is test_program_gpu.py."""

from __future__ import annotations

from pathlib import Path

from cutegen.profiler.program import folder_for
from cutegen.profiler.sanitizer_output import condense, parse
from cutegen.toolchain import discover
from tests.profiler.test_program_gpu import PROGRAM, line_of

RECORDED = Path(__file__).resolve().parent / "recorded" / "program" / "memcheck_past_the_end.txt"


def findings(roots: tuple[Path, ...]) -> tuple[list[dict], list[str]]:
    reports, errors = parse(RECORDED.read_text(), "memcheck")
    assert errors == 1025 and len(reports) == 3
    return condense(reports, folder_for(discover(), roots=roots), {})


def test_a_bare_source_name_is_found_in_the_programs_folder(tmp_path):
    (tmp_path / "bench.cu").write_text(PROGRAM)
    placed, unplaced = findings((tmp_path,))
    assert unplaced == []
    assert [(Path(f["file"]).name, f["line"], f["count"]) for f in placed] == [("bench.cu", line_of("// BUG"), 3)]
    assert Path(placed[0]["file"]) == (tmp_path / "bench.cu").resolve()


def test_a_bare_name_is_found_below_the_folder_once_and_never_guessed_between_two(tmp_path):
    (tmp_path / "src" / "kernels").mkdir(parents=True)
    (tmp_path / "src" / "kernels" / "bench.cu").write_text(PROGRAM)
    placed, _ = findings((tmp_path,))
    assert Path(placed[0]["file"]) == (tmp_path / "src" / "kernels" / "bench.cu").resolve()
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "bench.cu").write_text(PROGRAM)
    placed, unplaced = findings((tmp_path,))
    assert placed == [] and unplaced == ["memcheck: Invalid __global__ write of size 4 bytes"]


def test_without_the_source_the_error_is_unplaced_not_dropped(tmp_path):
    placed, unplaced = findings((tmp_path,))
    assert placed == [] and len(unplaced) == 1
