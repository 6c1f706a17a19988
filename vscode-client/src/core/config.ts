// Settings logic that needs no editor: which changes restart the server, and which Python runs it.

import * as path from "path";

export const SECTION = "cutegen";

/**
 * Settings that only take effect in a new server process. Everything else in the `cutegen` section
 * the running server pulls again itself (workspace/configuration after didChangeConfiguration).
 */
export const RESTART_SETTINGS = ["cutegen.python", "cutegen.serverArgs", "cutegen.serverEnv"];

export function needsRestart(affects: (section: string) => boolean): boolean {
  return RESTART_SETTINGS.some((s) => affects(s));
}

export interface Interpreter {
  command: string;
  /** Where the choice came from, for the log: "setting", "workspace .venv", "PATH". */
  source: string;
  /** A workspace interpreter the user has not answered for yet: ask before using it (`command` is not it). */
  ask?: string;
}

/** The user's answer about a workspace's interpreter, remembered per path in the extension's globalState:
 * a cloned repository's `.venv/bin/python` is a program from that repository, run only by the user's choice. */
export type VenvAnswer = "use" | "ignore";
export const VENV_ANSWERS_KEY = "cutegen.workspaceInterpreters";

/**
 * The Python that runs `python -m cutegen lsp`: the `cutegen.python` setting (with
 * `${workspaceFolder}` and `~` expanded), else a `.venv`/`venv` in a workspace folder the user chose to use
 * (`answers`), else `python3` from PATH (`python` on Windows) — with `ask` naming the first workspace
 * interpreter nobody has answered for.
 */
export function resolvePython(
  setting: string | undefined,
  folders: string[],
  exists: (file: string) => boolean,
  env: { home?: string; platform?: string } = {},
  answers: Record<string, VenvAnswer> = {},
): Interpreter {
  const windows = (env.platform ?? process.platform) === "win32";
  const value = (setting ?? "").trim();
  if (value) {
    return { command: expand(value, folders[0], env.home), source: "setting cutegen.python" };
  }
  const relative = windows ? ["Scripts", "python.exe"] : ["bin", "python"];
  let ask: string | undefined;
  for (const folder of folders) {
    for (const venv of [".venv", "venv"]) {
      const candidate = path.join(folder, venv, ...relative);
      if (!exists(candidate)) {
        continue;
      }
      if (answers[candidate] === "use") {
        return { command: candidate, source: `workspace ${venv} (your choice)` };
      }
      ask = ask ?? (answers[candidate] === undefined ? candidate : undefined);
    }
  }
  const fallback: Interpreter = { command: windows ? "python" : "python3", source: "PATH" };
  return ask ? { ...fallback, ask } : fallback;
}

export function expand(value: string, folder: string | undefined, home: string | undefined): string {
  let out = value;
  if (folder !== undefined) {
    out = out.split("${workspaceFolder}").join(folder);
  }
  if (home && (out === "~" || out.startsWith("~/"))) {
    out = home + out.slice(1);
  }
  return out;
}

/** `cutegen.serverArgs` → the argument list after `-m cutegen lsp`: strings only. */
export function serverArgs(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** `cutegen.serverEnv` → extra environment variables (string values only). */
export function serverEnv(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === "string") {
        out[k] = v;
      }
    }
  }
  return out;
}
