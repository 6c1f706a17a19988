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

test("else a workspace .venv, then venv, then python3 on PATH", () => {
  const have = (files: string[]) => (f: string) => files.includes(f);
  assert.deepEqual(resolvePython("", ["/a", "/b"], have([path.join("/b", ".venv", "bin", "python")])),
    { command: path.join("/b", ".venv", "bin", "python"), source: "workspace .venv" });
  assert.equal(resolvePython(undefined, ["/a"], have([path.join("/a", "venv", "bin", "python")])).source, "workspace venv");
  assert.deepEqual(resolvePython("", ["/a"], have([])), { command: "python3", source: "PATH" });
  assert.equal(resolvePython("", [], have([]), { platform: "win32" }).command, "python");
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
