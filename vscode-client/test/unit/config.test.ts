import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";

import { RESTART_SETTINGS, expand, needsRestart, resolvePython, serverArgs, serverEnv } from "../../src/core/config";

test("the interpreter setting wins, with ${workspaceFolder} and ~ expanded", () => {
  const none = () => false;
  assert.deepEqual(resolvePython("${workspaceFolder}/.venv/bin/python", ["/w"], none),
    { command: "/w/.venv/bin/python", source: "setting cutegen.python" });
  assert.equal(resolvePython("~/py/bin/python", [], none, { home: "/home/u" }).command, "/home/u/py/bin/python");
  assert.equal(resolvePython("  /usr/bin/python3.12 ", ["/w"], () => true).command, "/usr/bin/python3.12");
});

test("a workspace .venv only by the user's choice: asked once, remembered per path", () => {
  const have = (files: string[]) => (f: string) => files.includes(f);
  const b = path.join("/b", ".venv", "bin", "python");
  const a = path.join("/a", "venv", "bin", "python");
  // Never answered: python3 from PATH runs the server, and the venv is the question to ask.
  assert.deepEqual(resolvePython("", ["/a", "/b"], have([b])), { command: "python3", source: "PATH", ask: b });
  assert.deepEqual(resolvePython("", ["/a", "/b"], have([b]), {}, { [b]: "use" }),
    { command: b, source: "workspace .venv (your choice)" });
  assert.deepEqual(resolvePython("", ["/a", "/b"], have([b]), {}, { [b]: "ignore" }), { command: "python3", source: "PATH" });
  // A refused one is not asked again; the next one nobody answered for is.
  assert.equal(resolvePython(undefined, ["/a", "/b"], have([a, b]), {}, { [a]: "ignore" }).ask, b);
  assert.equal(resolvePython(undefined, ["/a"], have([a]), {}, { [a]: "use" }).source, "workspace venv (your choice)");
  assert.deepEqual(resolvePython("", ["/a"], have([])), { command: "python3", source: "PATH" });
  assert.equal(resolvePython("", [], have([]), { platform: "win32" }).command, "python");
  // The setting (a user setting: machine-scoped) never asks.
  assert.equal(resolvePython("/usr/bin/python3", ["/b"], have([b])).ask, undefined);
});

test("expand leaves other text alone", () => {
  assert.equal(expand("~user/x", "/w", "/home/u"), "~user/x");
  assert.equal(expand("${workspaceFolder}", undefined, undefined), "${workspaceFolder}");
});

test("only process-level settings restart the server", () => {
  const changed = (...keys: string[]) => (section: string) => keys.some((k) => k === section || k.startsWith(section + "."));
  assert.equal(needsRestart(changed("cutegen.python")), true);
  assert.equal(needsRestart(changed("cutegen.serverEnv")), true);
  assert.equal(needsRestart(changed("cutegen.nvcc", "cutegen.llmModel")), false); // the server pulls these itself
  assert.equal(needsRestart(changed("editor.fontSize")), false);
  assert.ok(RESTART_SETTINGS.every((s) => s.startsWith("cutegen.")));
});

test("server args and env keep strings only", () => {
  assert.deepEqual(serverArgs(["--tcp", 3, null, "x"]), ["--tcp", "x"]);
  assert.deepEqual(serverArgs("--tcp"), []);
  assert.deepEqual(serverEnv({ CUDA_HOME: "/cuda", N: 3 }), { CUDA_HOME: "/cuda" });
  assert.deepEqual(serverEnv(["x"]), {});
});
