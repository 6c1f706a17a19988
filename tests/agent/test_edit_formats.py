"""Edit formats: the replay corpus of replies written the way real models write them (every format,
prose, several fences, <think> blocks, elisions, stale line numbers, wrong format, another file), each
placed into the exact expected file or refused with its reason class; the same replies served over
real HTTP by the scripted endpoint; the setting tied to the manifest and the prompts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cutegen.agent import edit_formats, prompts
from cutegen.agent.edit_formats import REFUSALS, is_elision
from cutegen.agent.patch import apply_diff, apply_reply
from cutegen.settings import CHOICES, Settings
from tests.support.llm import llm_settings
from tests.agent.replay_corpus import replays, judge

ROOT = Path(__file__).resolve().parents[2]
CASES = replays()


def test_the_corpus_covers_every_format_and_both_outcomes():
    for fmt in edit_formats.FORMATS:
        mine = [c for c in CASES if c.written == fmt]
        assert any(c.expect == "placed" for c in mine) and any(c.expect == "refused" for c in mine), fmt
    assert {c.refuse for c in CASES if c.expect == "refused"} <= set(REFUSALS)
    assert any(c.shown_text is not None for c in CASES), "no stale-line-number case"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_replay(case):
    good, why, p = judge(case)
    assert good, f"{case.description}: {why} (notes: {p.notes})"
    if p.ok:  # the canonical diff shown to the person re-applies to exactly the same file
        again = apply_diff(p.diff, case.base_text, Path(case.base).name)
        assert again.ok and again.new_text == p.new_text


def test_the_corpus_round_trips_through_the_endpoint(scripted):
    """Every reply as the real openai client receives it from the scripted endpoint gets the same outcome; a
    reply with no answer at all (only an unclosed <think> block) is refused by the client itself, for the
    same reason."""
    from cutegen.agent.llm import LLMClient, LLMError

    server = scripted([{"reply": c.reply, "finish_reason": c.finish} for c in CASES])
    client = LLMClient(llm_settings(server.url, llm_retries=0))
    for c in CASES:
        try:
            reply = client.chat([{"role": "user", "content": f"TASK: patch `{c.base}`"}])
        except LLMError as e:
            assert c.expect == "refused" and e.kind == c.refuse, f"{c.name} through HTTP: {e.kind}: {e.message}"
            continue
        good, why, _ = judge(c, reply.text, reply.finish_reason)
        assert good, f"{c.name} through HTTP: {why}"
    assert server.remaining() == 0


def test_elision_markers_and_real_code():
    for line in ("// ... existing code ...", "  // ...", "...", "/* rest of the kernel unchanged */",
                 "// ... (unchanged)", "  # …"):
        assert is_elision(line), line
    for line in ("f(x, ...);", "template <typename... Ts>", "// the tail is handled below", "  y[i] = x[i];",
                 "// Exact IEEE division (no fast-math), so results match PyTorch bit-for-bit in practice."):
        assert not is_elision(line), line


def test_a_comment_line_the_file_really_has_is_context_not_an_elision():
    base = "int a;\n// ...\nint b;\nint c;\n"
    reply = "<<<<<<< SEARCH\n// ...\nint b;\n=======\n// ...\nint b2;\n>>>>>>> REPLACE\n"
    p = apply_reply(reply, base, "k.cu")
    assert p.ok and p.new_text == "int a;\n// ...\nint b2;\nint c;\n"


@pytest.mark.parametrize("payload, why", [
    ('[{"action": "replace", "line_number": ' + "1" * 5000 + ', "num_lines": 1, "new_code": "int c;"}]',
     "Exceeds the limit (4300 digits) for integer string conversion"),  # a plain ValueError, not JSONDecodeError
    ("[" * 100_000 + "]" * 100_000, "maximum recursion depth exceeded")])
def test_json_edits_python_cannot_read_are_refused_as_malformed(payload, why):
    p = apply_reply(f"```json\n{payload}\n```\n", "int a;\nint b;\n", "k.cu")
    assert not p.ok and p.kind == "malformed" and f"the JSON edits cannot be read ({why}" in p.error


def test_a_bare_json_list_nested_too_deeply_is_no_edit():
    p = apply_reply("[" * 100_000 + '"action"' + "]" * 100_000, "int a;\nint b;\n", "k.cu")
    assert not p.ok and p.kind == "no-edit"


def test_each_specific_format_refuses_the_others():
    base = (ROOT / "tests/agent/diffs/base/slow.cu").read_text()
    sr = next(c for c in CASES if c.name == "sr_plain").reply
    for fmt in ("diff", "json", "whole"):
        p = apply_reply(sr, base, "slow.cu", fmt=fmt)
        assert not p.ok and p.kind == "wrong-format" and "cutegen.llmEditFormat" in p.error
    assert apply_reply(sr, base, "slow.cu", fmt="search-replace").ok


def test_the_setting_its_manifest_entry_and_the_parser_agree():
    manifest = json.loads((ROOT / "vscode-client/package.json").read_text())
    prop = manifest["contributes"]["configuration"]["properties"]["cutegen.llmEditFormat"]
    assert tuple(prop["enum"]) == CHOICES["llm_edit_format"] == edit_formats.CHOICES
    assert prop["default"] == Settings().llm_edit_format == "auto"
    s, problems = Settings.from_dict({"llmEditFormat": "xml"})
    assert s.llm_edit_format == "auto" and "cutegen.llmEditFormat must be one of" in problems[0]
    assert Settings.from_dict({"llmEditFormat": "json"})[0].llm_edit_format == "json"
    mode = manifest["contributes"]["configuration"]["properties"]["cutegen.llmMode"]
    assert tuple(mode["enum"]) == CHOICES["llm_mode"] and mode["default"] == Settings().llm_mode == "pipeline"


def test_the_prompt_asks_for_the_chosen_format():
    text = "int a;\nint b;\n"
    auto = prompts.patch("k.cu", text, "error", "diagnosis", [])[-1]["content"]
    assert "<<<<<<< SEARCH" in auto and "1 | int a;" not in auto
    js = prompts.patch("k.cu", text, "error", "diagnosis", [], "json")[-1]["content"]
    assert '"line_number"' in js and "1 | int a;" in js and "2 | int b;" in js
    diff = prompts.optimize("k.cu", text, workload="w", baseline="b", profile="", menu=["x"], previous=[],
                            edit_format="diff")[-1]["content"]
    assert "```diff" in diff and "<<<<<<< SEARCH" not in diff
    whole = prompts.patch("k.cu", text, "error", "diagnosis", [], "whole")[-1]["content"]
    assert "complete new `k.cu`" in whole
