// The Versions view (CuTeGen's container): the tree of versions that Optimize searches kept of the active kernel,
// each with its ratio against the latest search's start ± the judge's noise, its verdict and its change. A click shows
// the diff from the file to that version (its text from the server, read-only); Restore (the item's context menu)
// asks the server to re-verify it, and the patch opens like every proposal (proposalView.ts).
//
// The server reads the tree (`cutegen.server.versions`, `cutegen.server.showVersion`); this only shows it.

import * as vscode from "vscode";
import { ExecuteCommandRequest } from "vscode-languageclient/node";

import { SERVER, baseName } from "./core/commands";
import { isObject } from "./core/results";
import {
  NewestRequest, VERSION_SCHEME, Version, VersionTree, childrenOf, describeVersion, parseVersions, versionPath,
  viewTarget,
} from "./core/versions";
import { Server } from "./server";

export const VIEW_ID = "cutegen.versions";

type Run = (command: string, args: unknown[]) => Promise<unknown>;

export class VersionsView implements vscode.TreeDataProvider<Version>, vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly treeChanged = new vscode.EventEmitter<Version | undefined>();
  readonly onDidChangeTreeData = this.treeChanged.event;
  private readonly textChanged = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.textChanged.event;
  private readonly texts = new Map<string, string>(); // version document path → text
  private readonly disposables: vscode.Disposable[] = [];
  private tree: VersionTree | undefined;
  private kernel: vscode.Uri | undefined;
  /** Why no kernel is shown (the active file is not one), while `kernel` is undefined. */
  private noKernel = "Open a CUDA kernel (.cu) to see its versions.";
  private readonly requests = new NewestRequest();
  private view: vscode.TreeView<Version> | undefined;

  constructor(private readonly server: Server, private readonly run: Run, private readonly log: vscode.LogOutputChannel) {}

  /** Creates the view and follows the active kernel. */
  register(): vscode.Disposable {
    this.view = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
    this.disposables.push(
      this.view,
      vscode.workspace.registerTextDocumentContentProvider(VERSION_SCHEME, this),
      vscode.window.onDidChangeActiveTextEditor((editor) => this.follow(editor?.document.uri)),
      this.view.onDidChangeVisibility((e) => {
        if (e.visible && !this.follow(vscode.window.activeTextEditor?.document.uri)) {
          void this.refresh(); // shown again over a diff or a webview: the kernel it showed, read again
        }
      }),
      vscode.workspace.onDidSaveTextDocument((document) => {
        if (document.uri.toString() === this.kernel?.toString()) {
          void this.refresh();
        }
      }),
    );
    this.follow(vscode.window.activeTextEditor?.document.uri);
    return this;
  }

  /** The view follows the active editor (core/versions.ts viewTarget): a kernel's tree, read again each time it
   * becomes active; another file empties it, with a message saying why. False where it kept what it showed. */
  private follow(uri: vscode.Uri | undefined): boolean {
    const target = viewTarget(uri && { scheme: uri.scheme, path: uri.path, uri: uri.toString() });
    if (target === "keep") {
      return false; // a version's diff, a proposal, a log, a webview: they belong to the kernel shown
    }
    const kernel = "kernel" in target ? uri : undefined;
    if (kernel?.toString() !== this.kernel?.toString()) {
      this.kernel = kernel;
      this.tree = undefined; // never the previous kernel's rows, not even while the new ones are read
      if (this.view) {
        this.view.description = kernel ? baseName(kernel.toString()) : undefined;
        this.view.message = kernel ? `Reading the versions of ${baseName(kernel.toString())}…` : undefined;
      }
      this.treeChanged.fire(undefined);
    }
    if ("none" in target) {
      this.noKernel = target.none;
    }
    void this.refresh();
    return true;
  }

  /** Asks the server for the active kernel's tree (quietly: no progress, no status bar). */
  async refresh(): Promise<void> {
    if (!this.view?.visible) {
      return; // read when shown
    }
    const kernel = this.kernel;
    const request = this.requests.start();
    const reply = kernel ? await this.ask(SERVER.versions, [{ uri: kernel.toString() }]) : undefined;
    if (!this.requests.isNewest(request)) {
      return; // the person moved on to another file meanwhile: its own request shows it
    }
    const parsed = kernel ? parseVersions(reply) : { error: this.noKernel };
    this.tree = "error" in parsed ? undefined : parsed;
    if (this.view) {
      this.view.description = kernel ? baseName(kernel.toString()) : undefined;
      this.view.message = "error" in parsed ? parsed.error : parsed.versions.length ? undefined : parsed.message;
    }
    this.treeChanged.fire(undefined);
  }

  private async ask(command: string, args: unknown[]): Promise<unknown> {
    const client = await this.server.ready();
    if (!client || !this.server.advertises(command)) {
      return { ok: false, message: "This version of the language server keeps no versions of a kernel." };
    }
    try {
      return await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
    } catch (e) {
      const detail = e instanceof Error ? e.message : String(e);
      this.log.warn(`${command} failed: ${detail}`);
      return { ok: false, message: detail };
    }
  }

  getTreeItem(v: Version): vscode.TreeItem {
    const d = describeVersion(v);
    const leaf = !this.tree || childrenOf(this.tree, v.id).length === 0;
    const item = new vscode.TreeItem(d.label, leaf ? vscode.TreeItemCollapsibleState.None
      : vscode.TreeItemCollapsibleState.Expanded);
    item.id = v.id;
    item.description = d.description;
    item.tooltip = d.tooltip;
    item.contextValue = d.contextValue;
    item.iconPath = new vscode.ThemeIcon(!v.ok ? "close" : v.best ? "star-full" : v.current ? "circle-filled" : "pass");
    item.command = { command: "cutegen.showVersion", title: "Show Version", arguments: [v] };
    return item;
  }

  getChildren(v?: Version): Version[] {
    return this.tree ? childrenOf(this.tree, v ? v.id : null) : [];
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.path) ?? "";
  }

  /** The diff from the file to a version (the clicked one, else the selected one). */
  async show(arg?: unknown): Promise<void> {
    const v = this.versionOf(arg);
    const kernel = this.kernel;
    if (!v || !kernel) {
      return;
    }
    const reply = await this.ask(SERVER.showVersion, [{ uri: kernel.toString(), id: v.id }]);
    const version = isObject(reply) && isObject(reply.version) ? reply.version : undefined;
    if (!version || typeof version.text !== "string") {
      void vscode.window.showWarningMessage(`CuTeGen: ${isObject(reply) ? String(reply.message) : "no such version"}`);
      return;
    }
    const file = baseName(kernel.toString());
    const right = vscode.Uri.from({ scheme: VERSION_SCHEME, path: versionPath(v.id, file) });
    this.texts.set(right.path, version.text);
    this.textChanged.fire(right);
    await vscode.commands.executeCommand("vscode.diff", kernel, right,
      `${file} ↔ version ${v.id.slice(0, 10)} (${v.ratio}, ${v.verdict})`, { preview: true });
  }

  /** Restore a version: the server re-verifies it and the patch opens as a proposal (Apply / Discard). */
  async restore(arg?: unknown): Promise<unknown> {
    const v = this.versionOf(arg);
    const kernel = this.kernel;
    if (!v || !kernel) {
      return undefined;
    }
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === kernel.toString());
    const args = { id: v.id, uri: kernel.toString(), ...(document ? { version: document.version } : {}) };
    return this.run(SERVER.restoreVersion, [args]);
  }

  private versionOf(arg: unknown): Version | undefined {
    if (isObject(arg) && typeof arg.id === "string") {
      return this.tree?.versions.find((v) => v.id === arg.id);
    }
    return this.view?.selection[0];
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) {
      d.dispose();
    }
    this.treeChanged.dispose();
    this.textChanged.dispose();
  }
}
