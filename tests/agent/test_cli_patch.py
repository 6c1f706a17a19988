"""`cutegen patch FILE --reply REPLY`: replays a recorded reply, prints the diff or the refusal, changes nothing."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from cutegen.agent import prompts
from cutegen.cli.patch import main
from tests.agent.replay_corpus import REPLAYS, load

BASES = Path(__file__).resolve().parent / "diffs" / "base"


def _run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main([str(a) for a in argv], out, err), out.getvalue(), err.getvalue()


def _kernel(tmp_path: Path, name="slow.cu", base=BASES / "slow.cu") -> Path:
    target = tmp_path / name
    shutil.copy(base, target)
    return target


def test_a_placeable_reply_prints_its_diff_and_changes_nothing(tmp_path):
    kernel = _kernel(tmp_path)
    before = kernel.read_bytes()
    reply = tmp_path / "reply.md"
    reply.write_text(load(REPLAYS / "sr_plain.txt").reply)
    rc, out, err = _run(kernel, "--reply", reply)
    assert rc == 0, err
    assert out.startswith("--- a/slow.cu\n+++ b/slow.cu\n")
    assert "-constexpr int kBlockThreads = 64;" in out and "+constexpr int kBlockThreads = 256;" in out
    assert kernel.read_bytes() == before


def test_a_refused_reply_says_why_with_its_class(tmp_path):
    kernel = _kernel(tmp_path, "dup.cu", BASES / "dup.cu")
    reply = tmp_path / "reply.md"
    reply.write_text(load(REPLAYS / "sr_ambiguous.txt").reply)
    rc, out, err = _run(kernel, "--reply", reply)
    assert rc == 1 and out == ""
    assert err.startswith("refused (ambiguous): ") and "occur 2 times" in err


def test_the_format_option_refuses_other_formats(tmp_path):
    kernel = _kernel(tmp_path)
    reply = tmp_path / "reply.md"
    reply.write_text(load(REPLAYS / "sr_plain.txt").reply)
    rc, _, err = _run(kernel, "--reply", reply, "--format", "json")
    assert rc == 1 and "refused (wrong-format)" in err
    rc, out, _ = _run(kernel, "--reply", reply, "--format", "search-replace", "--json")
    result = json.loads(out)
    assert rc == 0 and result["ok"] and result["removed"] == 1 and result["refusal"] is None


def test_a_transcript_step_replays_against_the_text_its_prompt_showed(tmp_path):
    """A JSON-edit reply recorded before the user added lines at the top: the prompt in the step
    gives the numbering it used, and the edit lands on the moved line."""
    shown = (BASES / "slow.cu").read_text()
    kernel = _kernel(tmp_path, base=REPLAYS / "base" / "moved" / "slow.cu")
    step = tmp_path / "03-round1-patch.json"
    step.write_text(json.dumps({"round": 1, "step": "patch", "finish_reason": "stop",
                                "messages": prompts.patch("slow.cu", shown, "failure", "diagnosis", [], "json"),
                                "reply": load(REPLAYS / "json_replace.txt").reply}))
    rc, out, err = _run(kernel, "--reply", step)
    assert rc == 0, err
    assert "@@ -11,7 +11,7 @@" in out and "+constexpr int kBlockThreads = 256;" in out
    cut = json.loads(step.read_text()) | {"finish_reason": "length"}
    step.write_text(json.dumps(cut))
    rc, _, err = _run(kernel, "--reply", step)
    assert rc == 1 and "refused (truncated)" in err


def test_missing_files_are_reported(tmp_path):
    rc, _, err = _run(tmp_path / "none.cu", "--reply", tmp_path / "none.md")
    assert rc == 2 and "none.cu" in err
