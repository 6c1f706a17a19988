// The background loop's notification (the server's lsp/background.py sends LOOP_NOTIFICATION while a saved
// file is tested, timed and profiled without a command): what the status bar shows meanwhile and after, the
// "stale" mark once the file changes, and the progress token that cancels the run. Pure: server.ts feeds it.

import { Activity, StatusModel } from "./status";

export const LOOP_NOTIFICATION = "cutegen/loop";
export const CANCEL_COMMAND = "cutegen.cancelBackgroundRun";

export type LoopStage = "test" | "time" | "profile";
export type LoopState = "running" | "done" | "idle" | "stopped" | "cancelled" | "off";

export interface LoopEvent {
  uri: string;
  file: string;
  /** The document's version when the server sent it (null: not open). */
  version: number | null;
  stage: LoopStage | null;
  state: LoopState;
  /** The finished stage's one-line summary (the record's, as CodeLens and hover show it). */
  summary: string;
  level: "ok" | "info" | "error" | "warning";
  /** "slower than the last passing version: 3.1 → 4.7 ms", when the run ended in a regression. */
  regression: string | null;
  /** The run's work-done progress token: `window/workDoneProgress/cancel` with it stops the run. */
  token: string | null;
}

const STAGES = new Set(["test", "time", "profile"]);
const STATES = new Set(["running", "done", "idle", "stopped", "cancelled", "off"]);
const LEVELS = new Set(["ok", "info", "error", "warning"]);
const ACTIVITY: Record<LoopStage, Activity> = { test: "testing", time: "timing", profile: "profiling" };
/** The run record kind each stage writes: the status bar names the figure as CodeLens does. */
const FIGURE: Record<LoopStage, string> = { test: "test", time: "bench", profile: "profile" };

/** The notification's params, checked field by field (the server is another program); undefined if unusable. */
export function parseLoopEvent(params: unknown): LoopEvent | undefined {
  if (typeof params !== "object" || params === null) {
    return undefined;
  }
  const p = params as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" ? v : undefined);
  const uri = text(p.uri);
  const state = text(p.state);
  if (!uri || !state || !STATES.has(state)) {
    return undefined;
  }
  const stage = text(p.stage);
  const level = text(p.level);
  return {
    uri,
    file: text(p.file) ?? uri.split("/").pop() ?? uri,
    version: typeof p.version === "number" ? p.version : null,
    stage: stage && STAGES.has(stage) ? (stage as LoopStage) : null,
    state: state as LoopState,
    summary: text(p.summary) ?? "",
    level: level && LEVELS.has(level) ? (level as LoopEvent["level"]) : "info",
    regression: text(p.regression) ?? null,
    token: text(p.token) ?? null,
  };
}

export class LoopStatus {
  private running = new Map<string, { handle: number; token: string | null }>();
  /** The file (and its version) whose figure the status bar shows now. */
  private shown: { uri: string; version: number | null } | undefined;

  constructor(private readonly status: StatusModel) {}

  onEvent(e: LoopEvent): void {
    if (e.state === "running" && e.stage) {
      this.end(e.uri);
      const handle = this.status.begin(ACTIVITY[e.stage], e.file, CANCEL_COMMAND);
      this.running.set(e.uri, { handle, token: e.token });
      return;
    }
    if (e.state === "done" && e.stage) {
      this.end(e.uri);
      this.show(e, `${e.file}: ${FIGURE[e.stage]}: ${e.summary}`, e.level === "warning" ? "warning" : e.level);
      return;
    }
    this.end(e.uri);
    if (e.state === "idle" && e.regression) {
      this.show(e, `${e.file}: ${e.regression}`, e.level === "error" ? "error" : "warning");
    } else if (e.state === "cancelled") {
      this.show(e, `${e.file}: background run cancelled`, "info");
    }
    // "stopped": a newer save of the file took over; its own run says what it finds. "off" (no GPU): the
    // server's one message says so; the status bar keeps the check's verdict ("compiles").
  }

  /** The editor's text of `uri` changed: a figure of an older version becomes stale. */
  changed(uri: string, version: number): void {
    if (this.shown && this.shown.uri === uri && this.shown.version !== null && version > this.shown.version) {
      this.status.markStale();
      this.shown = undefined;
    }
  }

  /** The newest running background run's progress token (the one Cancel stops). */
  token(): string | undefined {
    const all = [...this.running.values()];
    return all.length ? all[all.length - 1].token ?? undefined : undefined;
  }

  clear(): void {
    for (const uri of [...this.running.keys()]) {
      this.end(uri);
    }
  }

  private show(e: LoopEvent, text: string, level: "ok" | "info" | "error" | "warning"): void {
    this.status.setVerdict({ text, level });
    this.shown = { uri: e.uri, version: e.version };
  }

  private end(uri: string): void {
    const run = this.running.get(uri);
    if (run) {
      this.running.delete(uri);
      this.status.end(run.handle);
    }
  }
}
