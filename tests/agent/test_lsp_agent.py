"""The agent through the language server: a broken kernel → a quick fix offered only after it was
verified → applied with a versioned edit (re-based onto the user's later edits) → diagnostics clear."""

from __future__ import annotations

import asyncio
import shutil
import time

import pytest
from lsprotocol import types

from tests.support.llm import no_key_anywhere
from tests.support.editor import open_in_editor

pytestmark = pytest.mark.asyncio
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")

BROKEN = """\
// row sum: per-thread register accumulator sized with a runtime int
#include <cute/tensor.hpp>
using namespace cute;

__global__ void row_sum_kernel(float const* x, float* out, int rows, int cols, int cols_per_thread)
{
  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(rows, cols), make_stride(cols, _1{}));
  int row = blockIdx.x;
  Tensor gRow = mX(row, _);  // (cols)

  // the accumulator
  Tensor rAcc = make_tensor<float>(make_shape(cols_per_thread));
  clear(rAcc);
  for (int j = 0; j < size(rAcc); ++j) {
    int col = threadIdx.x * size(rAcc) + j;
    if (col < cols) rAcc(j) = gRow(col);
  }
  float s = 0.f;
  for (int j = 0; j < size(rAcc); ++j) s += rAcc(j);
  if (threadIdx.x == 0) out[row] = s;
}
"""
LINE = 11  # 0-based line of the error

FIRST_TRY = """```diff
--- a/row_sum.cu
+++ b/row_sum.cu
@@ -11,3 +11,3 @@
   // the accumulator
-  Tensor rAcc = make_tensor<float>(make_shape(cols_per_thread));
+  Tensor rAcc = make_tensor<float>(make_shape(Int<cols_per_thread>{}));
   clear(rAcc);
```"""
# The second try comes with a wrong hunk line and a stripped blank context line: the matcher places it.
SECOND_TRY = """The accumulator must have a static size; 4 values per thread:

```diff
--- a/row_sum.cu
+++ b/row_sum.cu
@@ -20,4 +20,4 @@
   Tensor gRow = mX(row, _);  // (cols)

   // the accumulator
-  Tensor rAcc = make_tensor<float>(make_shape(cols_per_thread));
+  Tensor rAcc = make_tensor<float>(Int<4>{});
```"""
REPLIES = [
    {"match": "TASK: diagnose", "reply": "**What**: `make_tensor<float>` is sized by the runtime `cols_per_thread` "
                                         "(line 12). **Why**: owning tensors live in registers and need a static size."},
    {"match": "TASK: patch", "reply": FIRST_TRY},
    {"match": "TASK: diagnose", "reply": "**What**: `Int<>` needs a constant; use a fixed `Int<4>{}`."},
    {"match": "TASK: patch", "reply": SECOND_TRY},
]


async def _until(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def _errors(params) -> list[types.Diagnostic]:
    return [d for d in params.diagnostics if d.severity == types.DiagnosticSeverity.Error]


async def _all_actions(client, uri, diagnostic):
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))


async def _actions(client, uri, diagnostic):
    """The verified quick fixes (the knowledge base's explanation is offered beside them)."""
    actions = await _all_actions(client, uri, diagnostic)
    return [a for a in actions or [] if a.command.command == "cutegen.server.applyPatch"]


@needs_nvcc
@pytest.mark.replies(REPLIES)
async def test_verified_quick_fix_rebased_and_applied(client, workspace):
    path = workspace / "row_sum.cu"
    path.write_text(BROKEN)
    uri = open_in_editor(client, path, BROKEN)
    first = await _until(lambda: [p for p in client.published if p.uri == uri], 90, "diagnostics")
    (error,) = _errors(first[0])
    assert error.range.start.line == LINE

    # No quick fix before a patch is verified (the first candidate does not even compile): only the
    # knowledge base's explanation, and no "configure an LLM" (one is configured).
    offered = await _all_actions(client, uri, error)
    assert [a.command.command for a in offered] == ["cutegen.server.diagnose"]
    actions = await _until(lambda: _actions(client, uri, error), 240, "a verified quick fix")
    (action,) = actions
    assert action.title in ("CuTeGen: apply verified fix (compiled, not tested)",)  # no problem paired here
    assert action.command.command == "cutegen.server.applyPatch"
    arg = action.command.arguments[0]
    assert arg["uri"] == uri and arg["version"] == 1
    assert client.scripted.remaining() == 0  # two rounds: the first patch failed to compile

    # The diagnosis of the round that verified is on the hover now.
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=LINE, character=12)))
    assert "CuTeGen agent diagnosis" in hover.contents.value and "needs a constant" in hover.contents.value

    # The fix command returns the same stored patch at once (contract shape).
    reply = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="cutegen.server.fix", arguments=[{"uri": uri, "version": 1, "diagnostic": error.data}]))
    patch = reply["patch"]
    assert patch["id"] == arg["id"] and patch["version"] == 1 and "Int<4>{}" in patch["new_text"]
    assert patch["verified"] == "compiled and built · not tested: no problem paired with row_sum.cu"
    assert patch["diff"].startswith("--- a/row_sum.cu\n+++ b/row_sum.cu\n@@")

    # The user edits elsewhere before applying: the patch is re-based, verified again, applied.
    edited = "// my note: keep this line\n" + BROKEN
    client.docs[uri] = (2, edited)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)]))
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="cutegen.server.applyPatch", arguments=[arg]))
    assert answer["applied"] is True and "re-based onto your edits and re-verified" in answer["message"]
    version, text = client.docs[uri]
    assert version == 3 and text.startswith("// my note: keep this line\n") and "make_tensor<float>(Int<4>{})" in text
    (uri_applied, edits), = client.applied
    assert len(edits) == 1 and edits[0].range.start.line == edits[0].range.end.line - 1 == LINE + 1  # one line

    # The server re-checks the applied text: the error is gone, tagged with the new version.
    cleared = await _until(lambda: [p for p in client.published if p.uri == uri and p.version == 3], 90,
                           "diagnostics of the applied fix")
    assert _errors(cleared[-1]) == []
    # Applying again: the patch is in already; nothing changes.
    again = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="cutegen.server.applyPatch", arguments=[arg]))
    assert again["applied"] is False and client.docs[uri][0] == 3
    transcripts = list((workspace / ".cutegen" / "agent").rglob("*-round*-patch.json"))
    assert len(transcripts) == 2
    no_key_anywhere(workspace)


@pytest.mark.cutegen_settings({})
async def test_without_an_endpoint_the_agent_says_so(client, workspace):
    path = workspace / "k.cu"
    path.write_text("int x;\n")

    async def run(command, *args):
        return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=command,
                                                                                        arguments=list(args)))

    fix = await run("cutegen.server.fix", {"uri": path.as_uri(), "version": 1, "diagnostic": {}})
    assert fix["ok"] is False and "not configured" in fix["message"] and "llmBaseUrl" in fix["message"]
    apply = await run("cutegen.server.applyPatch", {"id": "nope", "uri": path.as_uri(), "version": 1})
    assert apply == {"ok": False, "applied": False,
                     "message": "no such verified patch (it was made before the server restarted?)"}
    missing = await run("cutegen.server.optimize", {"uri": (workspace / "missing.cu").as_uri(), "version": 1})
    assert missing["ok"] is False and "no such file" in missing["message"]


GENERATED = """```cuda
#include <cutegen/abi.h>

__global__ void halve_kernel(const float* x, float* y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f * x[i];
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* in, int nin, DLTensor* out, int nout, cudaStream_t s) {
  long n = (long)cutegen_numel(in[0]);
  halve_kernel<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(cutegen_data<const float>(in[0]),
                                                          cutegen_data<float>(out[0]), n);
  return (int)cudaGetLastError();
}
```"""


@needs_nvcc
@pytest.mark.replies([{"match": "TASK: generate", "reply": "Here is the kernel:\n" + GENERATED}])
async def test_generate_proposes_a_verified_new_file_and_creates_it(client, workspace):
    problem = workspace / "halve.py"
    problem.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                       "        return 0.5 * x\ndef get_inputs():\n    return [torch.rand(16, 64)]\n"
                       "def get_init_inputs():\n    return []\n")
    (workspace / "halve.cu").write_text("// the user's own file: never replaced\n")
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="cutegen.server.generate", arguments=[{"uri": problem.as_uri()}]))
    patch = answer["patch"]
    assert patch["uri"].endswith("/halve_cutegen.cu") and "compiled and built" in patch["verified"]
    assert patch["new_text"].startswith("// cutegen: problem=halve.py\n")
    applied = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="cutegen.server.applyPatch", arguments=[{"id": patch["id"], "uri": patch["uri"], "version": None}]))
    assert applied["applied"], applied["message"]
    assert (workspace / "halve_cutegen.cu").read_text() == patch["new_text"]
    assert (workspace / "halve.cu").read_text() == "// the user's own file: never replaced\n"
