// Proposed patches waiting for Apply or Discard, and the virtual documents that show them.
//
// A proposal's text lives at `cutegen-proposal:/<id>/<file name>`: the file name keeps the language
// (and so highlighting) of the original; the id tells proposals apart.
// `cutegen-proposal:/<id>/base/<file name>` is the empty left side for a file that does not exist yet.

import { Patch } from "./results";

export const SCHEME = "cutegen-proposal";

export interface ProposalAddress {
  id: string;
  base: boolean;
}

export function proposalPath(id: string, fileName: string, base = false): string {
  return `/${encodeURIComponent(id)}/${base ? "base/" : ""}${fileName}`;
}

export function parseProposalPath(path: string): ProposalAddress | undefined {
  const parts = path.split("/").filter(Boolean);
  if (parts.length < 2) {
    return undefined;
  }
  try {
    return { id: decodeURIComponent(parts[0]), base: parts.length >= 3 && parts[1] === "base" };
  } catch {
    return undefined;
  }
}

export class ProposalStore {
  private byId = new Map<string, Patch>();

  add(patch: Patch): void {
    // One open proposal per file: a newer one replaces an older one for the same file.
    for (const [id, p] of this.byId) {
      if (p.uri === patch.uri && id !== patch.id) {
        this.byId.delete(id);
      }
    }
    this.byId.set(patch.id, patch);
  }

  get(id: string): Patch | undefined {
    return this.byId.get(id);
  }

  forFile(uri: string): Patch | undefined {
    for (const p of this.byId.values()) {
      if (p.uri === uri) {
        return p;
      }
    }
    return undefined;
  }

  delete(id: string): boolean {
    return this.byId.delete(id);
  }

  all(): Patch[] {
    return [...this.byId.values()];
  }

  get size(): number {
    return this.byId.size;
  }

  /** The text a proposal URI shows. */
  content(path: string): string {
    const address = parseProposalPath(path);
    const patch = address && this.byId.get(address.id);
    if (!address || !patch) {
      return "// This CuTeGen proposal is no longer available (it was applied or discarded).\n";
    }
    return address.base ? "" : patch.newText;
  }
}
