// The diagnose command's answer as a Markdown document for VS Code's preview: the server answers
// Markdown (the knowledge base's entry, or the LLM's diagnosis), which a notification would show raw.
// No `vscode` import: unit-tested under Node.

import { SERVER } from "./commands";
import { isObject } from "./results";

/** The scheme of the read-only virtual documents the preview renders. */
export const DIAGNOSIS_SCHEME = "cutegen-diagnosis";

export interface Diagnosis {
  markdown: string;
  /** "knowledge" (no LLM needed), "llm", or another word the server chose. */
  source: string;
}

/** The diagnosis in a reply of the server's diagnose command, or undefined. */
export function diagnosisOf(command: string, reply: unknown): Diagnosis | undefined {
  if (command !== SERVER.diagnose || !isObject(reply) || typeof reply.diagnosis !== "string" || !reply.diagnosis.trim()) {
    return undefined;
  }
  return { markdown: reply.diagnosis, source: typeof reply.source === "string" ? reply.source : "" };
}

const SOURCES: Record<string, string> = {
  knowledge: "From CuTeGen's knowledge base (no LLM needed). Configure `cutegen.llmBaseUrl` and " +
    "`cutegen.llmModel` for verified fixes.",
  llm: "From the LLM (`cutegen.llmModel`); fixes are offered only once verified.",
};

/** The whole preview document: a heading naming the file, where the diagnosis came from, the diagnosis. */
export function diagnosisDocument(file: string, d: Diagnosis): string {
  const origin = SOURCES[d.source] ?? "";
  return [`# CuTeGen: ${file}`, origin && `_${origin}_`, d.markdown.trim(), ""].filter((p) => p !== "").join("\n\n") + "\n";
}

/** The virtual document's path: one per kernel file, so a new diagnosis replaces the old preview. */
export function diagnosisPath(file: string): string {
  return `/${file.replace(/[\\/]/g, "_")}.diagnosis.md`;
}
