// The palette's commands and the server commands behind them. The ids differ from the server's:
// vscode-languageclient registers every command the server advertises under the server's own id.

export type Target =
  /** The active .cu file, sent as [{"uri", "version"}]. */
  | "kernel"
  /** A KernelBench reference (.py): the active one, else one picked in a dialog. */
  | "reference"
  /** The workspace folder the program runs in (the active file's, else the first), sent as [{"uri"}]. */
  | "workspace"
  /** No server call (handled by the extension). */
  | "none";

export interface UiCommand {
  id: string;
  title: string;
  /** The server command it runs (undefined for the extension's own). */
  server?: string;
  target: Target;
  /** Shown in the palette (false: only from buttons and menus). */
  palette: boolean;
}

export const SERVER = {
  check: "cutegen.server.check",
  test: "cutegen.server.test",
  profile: "cutegen.server.profile",
  diagnose: "cutegen.server.diagnose",
  fix: "cutegen.server.fix",
  optimize: "cutegen.server.optimize",
  applyPatch: "cutegen.server.applyPatch",
  tune: "cutegen.server.tune",
  generate: "cutegen.server.generate",
  restoreBest: "cutegen.server.restoreBest",
  layoutPicture: "cutegen.server.layoutPicture",
  profileLines: "cutegen.server.profileLines",
  sanitize: "cutegen.server.sanitize",
  versions: "cutegen.server.versions",
  showVersion: "cutegen.server.showVersion",
  restoreVersion: "cutegen.server.restoreVersion",
  profileProgram: "cutegen.server.profileProgram",
  sanitizeProgram: "cutegen.server.sanitizeProgram",
} as const;

export const UI_COMMANDS: UiCommand[] = [
  { id: "cutegen.optimize", title: "Optimize", server: SERVER.optimize, target: "kernel", palette: true },
  { id: "cutegen.runTests", title: "Run Tests", server: SERVER.test, target: "kernel", palette: true },
  { id: "cutegen.profile", title: "Profile", server: SERVER.profile, target: "kernel", palette: true },
  { id: "cutegen.profileLines", title: "Profile Lines", server: SERVER.profileLines, target: "kernel", palette: true },
  { id: "cutegen.sanitize", title: "Sanitize", server: SERVER.sanitize, target: "kernel", palette: true },
  // the user's own program (the cutegen.programCommand setting), its hot lines in its sources
  { id: "cutegen.profileProgram", title: "Profile Program", server: SERVER.profileProgram, target: "workspace", palette: true },
  { id: "cutegen.sanitizeProgram", title: "Sanitize Program", server: SERVER.sanitizeProgram, target: "workspace", palette: true },
  { id: "cutegen.tune", title: "Tune", server: SERVER.tune, target: "kernel", palette: true },
  { id: "cutegen.generate", title: "Generate Kernel from Reference", server: SERVER.generate, target: "reference", palette: true },
  { id: "cutegen.restoreBest", title: "Restore Best Version", server: SERVER.restoreBest, target: "kernel", palette: true },
  { id: "cutegen.showLog", title: "Show Log", target: "none", palette: true },
  { id: "cutegen.check", title: "Check File", server: SERVER.check, target: "kernel", palette: true },
  { id: "cutegen.showLayout", title: "Show Layout", target: "none", palette: true },
  { id: "cutegen.restartServer", title: "Restart Language Server", target: "none", palette: true },
  { id: "cutegen.cancelBackgroundRun", title: "Cancel Background Run", target: "none", palette: true },
  { id: "cutegen.applyPatch", title: "Apply Proposed Patch", target: "none", palette: false },
  { id: "cutegen.reviewPatch", title: "Review Verified Fix", target: "none", palette: false },
  { id: "cutegen.discardPatch", title: "Discard Proposed Patch", target: "none", palette: false },
  // the Versions view's (versionsView.ts): its title bar and its items' click and context menu
  { id: "cutegen.refreshVersions", title: "Refresh Versions", target: "none", palette: false },
  { id: "cutegen.showVersion", title: "Show Version", target: "none", palette: false },
  { id: "cutegen.restoreVersion", title: "Restore Version", target: "none", palette: false },
];

/** Server commands whose reply may carry a patch that opens as a diff. */
export const PATCH_COMMANDS = new Set<string>([
  SERVER.fix, SERVER.optimize, SERVER.tune, SERVER.generate, SERVER.restoreBest, SERVER.diagnose, SERVER.restoreVersion,
]);

/** Server commands after which the kernel's tree of versions, or which of them the file holds, may differ. */
export const VERSION_COMMANDS = new Set<string>([
  SERVER.optimize, SERVER.applyPatch, SERVER.restoreVersion, SERVER.restoreBest,
]);

/** The argument list for a server command about one document. */
export function documentArgs(uri: string, version: number | null): unknown[] {
  return [version === null ? { uri } : { uri, version }];
}

/** The file name a command is about, from its first argument (URI string or {"uri"}), for messages. */
export function fileOfArgs(args: unknown[]): string | undefined {
  const first = args[0];
  let uri: unknown = first;
  if (typeof first === "object" && first !== null) {
    const o = first as Record<string, unknown>;
    uri = o.uri ?? (typeof o.textDocument === "object" && o.textDocument !== null
      ? (o.textDocument as Record<string, unknown>).uri : undefined);
  }
  return typeof uri === "string" && uri ? baseName(uri) : undefined;
}

export function baseName(uriOrPath: string): string {
  const clean = uriOrPath.split(/[?#]/, 1)[0];
  const last = clean.split(/[\\/]/).filter(Boolean).pop() ?? clean;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** The extension's command that a server quick fix runs instead of applying its patch unseen. */
export const REVIEW_COMMAND = "cutegen.reviewPatch";

/**
 * The quick fix's arguments for the review: the server's [{"id","uri","version"}] plus the
 * diagnostic's data, which `cutegen.server.fix` needs to find the verified patch again.
 */
export function reviewArguments(args: unknown[], diagnosticData: unknown): unknown[] {
  const first = args[0];
  if (typeof first !== "object" || first === null) {
    return args;
  }
  return [{ ...(first as Record<string, unknown>), ...(diagnosticData !== undefined ? { diagnostic: diagnosticData } : {}) }];
}

/** The server call that yields the patch a quick fix stands for: fix [{"uri","version","diagnostic"}]. */
export function fixArgumentsForReview(args: unknown[]): unknown[] | undefined {
  const first = args[0];
  if (typeof first !== "object" || first === null) {
    return undefined;
  }
  const a = first as Record<string, unknown>;
  if (typeof a.uri !== "string") {
    return undefined;
  }
  const out: Record<string, unknown> = { uri: a.uri };
  if (typeof a.version === "number") out.version = a.version;
  if (a.diagnostic !== undefined) out.diagnostic = a.diagnostic;
  return [out];
}

/** "CuTeGen: apply verified fix (…)" → "CuTeGen: review and apply verified fix (…)": it opens the diff first. */
export function reviewTitle(title: string): string {
  return title.replace(/^CuTeGen: apply\b/, "CuTeGen: review and apply");
}
