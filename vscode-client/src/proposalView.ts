// Proposed patches as diffs: current file ↔ proposal (a virtual document), with what was verified and
// the figures; Apply / Discard from the notification, the diff editor's title bar or the palette.
//
// Apply goes through the server (`cutegen.server.applyPatch`): it checks that the file is still at the
// version the patch was made for, records the patch as applied, and edits the file with one versioned
// workspace/applyEdit, which VS Code applies as one undoable edit. The extension then saves the file
// (`cutegen.saveAfterApply`), so the file on disk changes and the server checks it again. Only a server
// without applyPatch gets the fallback: the extension replaces the text itself in one WorkspaceEdit.

import * as vscode from "vscode";

import { SERVER, baseName } from "./core/commands";
import { ProposalStore, SCHEME, parseProposalPath, proposalPath } from "./core/proposals";
import { Patch, describePatch, isObject } from "./core/results";

type Run = (command: string, args: unknown[]) => Promise<unknown>;

export class ProposalView implements vscode.TextDocumentContentProvider, vscode.Disposable {
  readonly store = new ProposalStore();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private run: Run | undefined;
  private canApplyOnServer: () => boolean = () => false;

  constructor(private readonly log: vscode.LogOutputChannel) {}

  connect(run: Run, canApplyOnServer: () => boolean): void {
    this.run = run;
    this.canApplyOnServer = canApplyOnServer;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.store.content(uri.path);
  }

  /** Open the diff and offer Apply / Discard. */
  async show(patch: Patch): Promise<void> {
    const target = vscode.Uri.parse(patch.uri);
    const file = baseName(patch.uri);
    this.store.add(patch);
    const right = proposalUri(patch.id, file);
    this.changed.fire(right);
    await this.updateContext();
    const exists = await fileExists(target);
    const left = exists ? target : proposalUri(patch.id, file, true);
    this.log.info(`proposal ${patch.id} for ${file}: ${patch.verified}; ${patch.figures.join(" · ")}\n${patch.diff}`);
    await vscode.commands.executeCommand("vscode.diff", left, right,
      `${file} ↔ CuTeGen proposal (${patch.verified})`, { preview: false });
    void vscode.window.showInformationMessage(describePatch(patch, file), "Apply", "Discard").then((choice) => {
      if (choice === "Apply") {
        void this.apply(patch.id);
      } else if (choice === "Discard") {
        void this.discard(patch.id);
      }
    });
  }

  /** Apply a proposal: by id, by its diff editor's URI, else the active or only one. */
  async apply(arg?: unknown): Promise<boolean> {
    const patch = this.resolve(arg);
    if (!patch) {
      void vscode.window.showInformationMessage("CuTeGen: there is no proposed patch to apply.");
      return false;
    }
    const target = vscode.Uri.parse(patch.uri);
    const file = baseName(patch.uri);
    const document = await openIfExists(target);
    if (document && patch.version !== null && document.version !== patch.version) {
      const choice = await vscode.window.showWarningMessage(
        `CuTeGen: ${file} changed after this patch was proposed (version ${patch.version}, now ${document.version}); ` +
        "it was not applied. Ask for a new one on the current text.", "Discard Proposal");
      if (choice === "Discard Proposal") {
        await this.discard(patch.id);
      }
      return false;
    }
    if (this.run && this.canApplyOnServer()) {
      const reply = await this.run(SERVER.applyPatch, [{ id: patch.id, uri: patch.uri, version: patch.version }]);
      // The runner calls applied() when the server says so.
      return isObject(reply) && reply.applied === true;
    }
    if (!(await applyLocally(patch, target, document))) {
      void vscode.window.showWarningMessage(`CuTeGen: the patch to ${file} could not be applied.`);
      return false;
    }
    await this.applied([{ id: patch.id, uri: patch.uri }]);
    return true;
  }

  /** After the server applied a patch: save the file, close the proposal, show the file. */
  async applied(args: unknown[], serverMessage?: string): Promise<void> {
    const first = isObject(args[0]) ? args[0] : {};
    const id = typeof first.id === "string" ? first.id : undefined;
    const patch = id ? this.store.get(id) : undefined;
    const uri = typeof first.uri === "string" ? first.uri : patch?.uri;
    if (!uri) {
      return;
    }
    const target = vscode.Uri.parse(uri);
    const document = await openIfExists(target);
    if (document?.isDirty && vscode.workspace.getConfiguration("cutegen").get<boolean>("saveAfterApply", true)) {
      await document.save();
    }
    if (patch) {
      await this.close(patch);
    }
    if (document) {
      await vscode.window.showTextDocument(document, { preview: false });
    }
    this.log.info(`patch ${id ?? ""} applied to ${baseName(uri)}`);
    const how = serverMessage ? ` (${serverMessage.replace(/^applied:\s*/, "")})` : "";
    void vscode.window.showInformationMessage(`CuTeGen: patch applied to ${baseName(uri)}${how}. Undo reverts it.`);
  }

  async discard(arg?: unknown): Promise<void> {
    const patch = this.resolve(arg);
    if (patch) {
      await this.close(patch);
      this.log.info(`proposal ${patch.id} for ${baseName(patch.uri)} discarded`);
    }
  }

  dispose(): void {
    this.changed.dispose();
  }

  private async close(patch: Patch): Promise<void> {
    this.store.delete(patch.id);
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((tab) => {
      const input = tab.input;
      return input instanceof vscode.TabInputTextDiff && input.modified.scheme === SCHEME &&
        parseProposalPath(input.modified.path)?.id === patch.id;
    });
    if (tabs.length) {
      await vscode.window.tabGroups.close(tabs);
    }
    this.changed.fire(proposalUri(patch.id, baseName(patch.uri)));
    await this.updateContext();
  }

  private resolve(arg: unknown): Patch | undefined {
    if (typeof arg === "string") {
      return this.store.get(arg);
    }
    if (arg instanceof vscode.Uri && arg.scheme === SCHEME) {
      const address = parseProposalPath(arg.path);
      return address && this.store.get(address.id);
    }
    const active = activeProposalId();
    if (active) {
      return this.store.get(active);
    }
    const all = this.store.all();
    return all.length === 1 ? all[0] : undefined;
  }

  private async updateContext(): Promise<void> {
    await vscode.commands.executeCommand("setContext", "cutegen.hasProposal", this.store.size > 0);
  }
}

export function proposalUri(id: string, file: string, base = false): vscode.Uri {
  return vscode.Uri.from({ scheme: SCHEME, path: proposalPath(id, file, base) });
}

function activeProposalId(): string | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  if (input instanceof vscode.TabInputTextDiff && input.modified.scheme === SCHEME) {
    return parseProposalPath(input.modified.path)?.id;
  }
  const document = vscode.window.activeTextEditor?.document;
  if (document?.uri.scheme === SCHEME) {
    return parseProposalPath(document.uri.path)?.id;
  }
  return undefined;
}

async function fileExists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

async function openIfExists(uri: vscode.Uri): Promise<vscode.TextDocument | undefined> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open) {
    return open;
  }
  return (await fileExists(uri)) ? vscode.workspace.openTextDocument(uri) : undefined;
}

/** The fallback: the whole new text in one WorkspaceEdit (one undo step). */
async function applyLocally(patch: Patch, target: vscode.Uri, document: vscode.TextDocument | undefined): Promise<boolean> {
  const edit = new vscode.WorkspaceEdit();
  if (document) {
    const all = new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length));
    edit.replace(target, all, patch.newText);
  } else {
    edit.createFile(target, { ignoreIfExists: true });
    edit.insert(target, new vscode.Position(0, 0), patch.newText);
  }
  return vscode.workspace.applyEdit(edit);
}
