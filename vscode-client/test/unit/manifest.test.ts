// The manifest (package.json) against the server: every setting the server reads is contributed with
// the server's default and a description; the palette commands are contributed as the issue names them.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { UI_COMMANDS } from "../../src/core/commands";
import { RESTART_SETTINGS } from "../../src/core/config";

const root = path.resolve(__dirname, "..", "..", "..");
const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
const properties: Record<string, { default: unknown; markdownDescription?: string; description?: string; type: unknown }> =
  manifest.contributes.configuration.properties;
const settingsPy = path.resolve(root, "..", "server", "cutegen", "settings.py");

/** Settings only the extension reads. */
const CLIENT_ONLY = new Set([...RESTART_SETTINGS, "cutegen.saveAfterApply", "cutegen.trace.server"]);

/** `name: type = default` lines of the Settings dataclass → camelCase key → default as JSON. */
export function serverSettings(source: string): Map<string, unknown> {
  const body = source.split(/^class Settings\b.*$/m)[1]?.split(/^\s*(?:@classmethod|def )/m)[0] ?? "";
  const out = new Map<string, unknown>();
  for (const m of body.matchAll(/^ {4}(\w+):\s*[^=\n]+?=\s*(.+?)\s*(?:#.*)?$/gm)) {
    const camel = m[1].replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    out.set(camel, pyDefault(m[2]));
  }
  return out;
}

function pyDefault(text: string): unknown {
  if (text === "None") return ""; // contributed as an empty string; the server reads "" as unset
  if (text === "True" || text === "False") return text === "True";
  if (/^field\(default_factory=list\)$/.test(text)) return [];
  if (/^field\(default_factory=dict\)$/.test(text)) return {};
  if (/^-?\d+(\.\d+)?(e-?\d+)?$/.test(text)) return Number(text);
  const quoted = text.match(/^(["'])(.*)\1$/);
  if (quoted) return quoted[2];
  return `<unparsed: ${text}>`;
}

test("every server setting is contributed with the server's default and a description", { skip: !fs.existsSync(settingsPy) && "no server/ beside the extension" }, () => {
  const server = serverSettings(fs.readFileSync(settingsPy, "utf8"));
  assert.ok(server.size >= 15, `parsed only ${server.size} settings from settings.py`);
  for (const [key, value] of server) {
    const prop = properties[`cutegen.${key}`];
    assert.ok(prop, `cutegen.${key} (read by the server) is not contributed in package.json`);
    assert.deepEqual(prop.default, value, `cutegen.${key}: package.json default ${JSON.stringify(prop.default)}, server ${JSON.stringify(value)}`);
  }
  for (const key of Object.keys(properties)) {
    const name = key.slice("cutegen.".length);
    assert.ok(server.has(name) || CLIENT_ONLY.has(key), `${key} is read by neither the server nor the extension`);
  }
});

test("settings have descriptions and typed defaults", () => {
  for (const [key, prop] of Object.entries(properties)) {
    assert.ok(key.startsWith("cutegen."), key);
    assert.ok((prop.markdownDescription ?? prop.description ?? "").length > 20, `${key} needs a description`);
    assert.ok("default" in prop, `${key} needs a default`);
    const type = prop.type === "integer" ? "number" : prop.type === "array" ? "object" : prop.type;
    assert.equal(typeof prop.default, type, `${key}: default ${JSON.stringify(prop.default)} is not a ${prop.type}`);
  }
});

test("commands: contributed, titled as in the palette, and wired", () => {
  const contributed = new Map<string, { title: string; category: string }>(
    manifest.contributes.commands.map((c: { command: string; title: string; category: string }) => [c.command, c]));
  for (const c of UI_COMMANDS) {
    const entry = contributed.get(c.id);
    assert.ok(entry, `${c.id} is not contributed`);
    assert.equal(`${entry.category}: ${entry.title}`, `CuTeGen: ${c.title}`);
  }
  assert.equal(contributed.size, UI_COMMANDS.length);
  const hidden = manifest.contributes.menus.commandPalette.map((m: { command: string }) => m.command);
  for (const c of UI_COMMANDS.filter((u) => !u.palette)) {
    assert.ok(hidden.includes(c.id), `${c.id} should be hidden from the palette unless a proposal is open`);
  }
});

test("activation, engine and entry point", () => {
  assert.deepEqual(manifest.activationEvents, ["onLanguage:cuda-cpp", "workspaceContains:**/*.cu", "workspaceContains:**/*.cuh"]);
  assert.equal(manifest.engines.vscode, "^1.91.0"); // vscode-languageclient 11's floor
  assert.equal(manifest.main, "./dist/extension.js");
  assert.equal(manifest.dependencies["vscode-languageclient"].split(".")[0].replace(/\D/g, ""), "11");
  const types = manifest.devDependencies["@types/vscode"].replace(/[^\d.]/g, "").split(".").map(Number);
  assert.ok(types[0] === 1 && types[1] <= 91, "@types/vscode must not be newer than engines.vscode (vsce refuses)");
});

test("the settings.py parser", () => {
  const parsed = serverSettings([
    "class Settings:",
    "    nvcc: str | None = None  # path",
    "    flags: list[str] = field(default_factory=list)",
    "    timeout: float = 120.0",
    "    name_of_key: str = \"OPENAI_API_KEY\"  # the NAME",
    "    on: bool = False",
    "",
    "    @classmethod",
    "    def from_dict(cls, raw: dict | None = None) -> int:",
    "        x: int = 3",
  ].join("\n"));
  assert.deepEqual([...parsed], [["nvcc", ""], ["flags", []], ["timeout", 120], ["nameOfKey", "OPENAI_API_KEY"], ["on", false]]);
});

const trustPy = path.resolve(root, "..", "server", "cutegen", "workspace_trust.py");

test("what a workspace may not set is machine-scoped, as the server's own rule has it", { skip: !fs.existsSync(trustPy) && "no server/ beside the extension" }, () => {
  const listed = fs.readFileSync(trustPy, "utf8").match(/^PROTECTED = \(([^)]*)\)/m)?.[1] ?? "";
  const keys = [...listed.matchAll(/"(\w+)"/g)].map((m) => "cutegen." + m[1].replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()));
  assert.ok(keys.length >= 6, `parsed only ${keys.length} protected settings`);
  for (const key of [...keys, "cutegen.python", "cutegen.serverArgs", "cutegen.serverEnv"]) {
    const scope = (properties[key] as { scope?: string } | undefined)?.scope;
    assert.equal(scope, "machine", `${key} must be machine-scoped (a workspace cannot set it), not ${scope}`);
  }
});
