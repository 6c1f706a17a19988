// The kernel's tree of versions (the server's `cutegen.server.versions` reply), read defensively, and how each
// version reads in the Versions view. No `vscode` import: unit-tested under Node.

import { baseName } from "./commands";
import { isObject } from "./results";

/** One version the judge saw, as the server sends it. */
export interface Version {
  id: string;
  parent: string | null;
  /** The direction it was asked for ("" for a search's start). */
  change: string;
  /** The changes from the start to it, in order. */
  path: string[];
  ok: boolean;
  verdict: string;
  label: string;
  /** Its ratio against the latest search's start ± the judge's noise, as the server words it ("2.10× ±3%",
   * "not timed"). */
  ratio: string;
  /** The file holds this version's text. */
  current: boolean;
  /** The best version verified better than a start. */
  best: boolean;
}

export interface VersionTree {
  /** The tree.json the versions are read from (a tooltip says where). */
  tree: string;
  versions: Version[];
  /** Candidates that did not join as better versions. */
  failures: number;
  message: string;
}

/** The file holding version texts opened beside the kernel: `cutegen-version:/<id>/<file name>`. */
export const VERSION_SCHEME = "cutegen-version";

export function versionPath(id: string, fileName: string): string {
  return `/${encodeURIComponent(id)}/${fileName}`;
}

/** The tree in a versions reply, or a message saying why there is none. */
export function parseVersions(reply: unknown): VersionTree | { error: string } {
  if (!isObject(reply)) {
    return { error: "the language server sent no versions" };
  }
  const message = typeof reply.message === "string" ? reply.message : "";
  if (reply.ok !== true || !isObject(reply.tree)) {
    return { error: message || "the language server sent no versions" };
  }
  const raw = Array.isArray(reply.tree.versions) ? reply.tree.versions : [];
  const versions = raw.flatMap((v) => (isObject(v) && typeof v.id === "string" && v.id ? [toVersion(v)] : []));
  return {
    tree: typeof reply.tree.tree === "string" ? reply.tree.tree : "",
    versions,
    failures: typeof reply.tree.failures === "number" ? reply.tree.failures : 0,
    message,
  };
}

function toVersion(v: Record<string, unknown>): Version {
  const text = (x: unknown, fallback = ""): string => (typeof x === "string" ? x : fallback);
  return {
    id: v.id as string,
    parent: typeof v.parent === "string" && v.parent ? v.parent : null,
    change: text(v.change),
    path: Array.isArray(v.path) ? v.path.filter((p): p is string => typeof p === "string") : [],
    ok: v.ok === true,
    verdict: text(v.verdict, "unknown"),
    label: text(v.label),
    ratio: text(v.ratio, "not timed"),
    current: v.current === true,
    best: v.best === true,
  };
}

/** The versions under `parent` (null: the roots, and versions whose parent is missing), oldest first. */
export function childrenOf(tree: VersionTree, parent: string | null): Version[] {
  const known = new Set(tree.versions.map((v) => v.id));
  return tree.versions.filter((v) => (parent === null ? v.parent === null || !known.has(v.parent) : v.parent === parent));
}

/** How a version reads in the view: its change, then ratio ± interval and verdict, marked best / current. */
export function describeVersion(v: Version): { label: string; description: string; tooltip: string; contextValue: string } {
  const marks = [v.best ? "best" : "", v.current ? "in the file" : ""].filter(Boolean);
  const description = `${v.ratio} · ${v.verdict}` + (marks.length ? ` · ${marks.join(", ")}` : "");
  const tooltip = [`${v.id}: ${v.path.join(" → ") || "the start of a search"}`, v.label, description]
    .filter(Boolean).join("\n");
  return {
    label: `${v.best ? "★ " : ""}${v.change || "(start)"}`,
    description,
    tooltip,
    // only a version that could be offered is restorable: a failed candidate never verified
    contextValue: v.ok && !v.current ? "cutegen.version.restorable" : "cutegen.version",
  };
}

/** The active editor's document, as the view needs to know it (a `vscode.Uri`'s parts). */
export interface ActiveDocument {
  scheme: string;
  path: string;
  /** The whole URI, as the server is asked with it. */
  uri: string;
}

/** What the Versions view shows after the active editor changed: a kernel's tree, nothing (and why), or what it
 * showed already (`keep`). */
export type ViewTarget = { kernel: string } | { none: string } | "keep";

const CUDA_FILE = /\.(cu|cuh)$/i;

/**
 * Where the view follows the active editor: a CUDA file's tree; for another file of the workspace, nothing, and a
 * message (never the previous kernel's rows). A document that is not a file (a version's text in a diff, a proposal,
 * an output channel) or no text editor at all (a webview has focus) keeps the kernel shown: those belong to it.
 */
export function viewTarget(active: ActiveDocument | undefined): ViewTarget {
  if (!active || active.scheme !== "file") {
    return "keep";
  }
  if (!CUDA_FILE.test(active.path)) {
    return { none: `${baseName(active.path)} is not a CUDA kernel: open a .cu file to see the versions Optimize kept of it.` };
  }
  return { kernel: active.uri };
}

/** Numbers the view's requests so that only the newest one's reply is shown (a slow reply for the kernel before
 * must not replace the rows of the one the person switched to). */
export class NewestRequest {
  private last = 0;

  start(): number {
    return ++this.last;
  }

  isNewest(request: number): boolean {
    return request === this.last;
  }
}
