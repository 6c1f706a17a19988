// CuTeGen for VS Code: starts the Python language server (`python -m cutegen lsp`) and adds what LSP
// lacks: palette commands, diff previews of proposed patches, a status bar item.

import * as vscode from "vscode";

import {
  REVIEW_COMMAND, SERVER, UI_COMMANDS, UiCommand, VERSION_COMMANDS, documentArgs, fixArgumentsForReview,
} from "./core/commands";
import { needsRestart } from "./core/config";
import { DIAGNOSIS_SCHEME } from "./core/diagnosis";
import { MessageGate, RecentMessages } from "./core/messages";
import { SCHEME } from "./core/proposals";
import { StatusModel } from "./core/status";
import { DiagnosisView } from "./diagnosisView";
import { LayoutView } from "./layoutView";
import { LinesView } from "./linesView";
import { ProposalView } from "./proposalView";
import { Runner } from "./runner";
import { Server } from "./server";
import { StatusBar } from "./statusBar";
import { VersionsView } from "./versionsView";

let server: Server | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel("CuTeGen", { log: true });
  const status = new StatusModel();
  const messages = new RecentMessages();
  const gate = new MessageGate(messages);
  const proposals = new ProposalView(log);
  const layouts = new LayoutView(log);
  const lines = new LinesView();
  server = new Server(log, status, gate, context.globalState);
  const diagnoses = new DiagnosisView();
  const runner = new Runner(server, status, proposals, messages, gate, log, diagnoses);
  const running = server;
  // A profileLines reply (from the palette or a CodeLens) opens its picture beside the code; after an Optimize or
  // a restore the Versions view reads the tree again.
  const run = async (command: string, args: unknown[]): Promise<unknown> => {
    const reply = await runner.run(command, args);
    if (command === SERVER.profileLines) {
      lines.show(reply);
    }
    if (VERSION_COMMANDS.has(command)) {
      void versions.refresh();
    }
    return reply;
  };
  const versions = new VersionsView(server, run, log);
  server.setCommandHook(run);
  proposals.connect((command, args) => runner.run(command, args), () => running.advertises(SERVER.applyPatch));

  context.subscriptions.push(
    log, proposals, layouts, lines, server, new StatusBar(status), versions.register(),
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, proposals),
    diagnoses, vscode.workspace.registerTextDocumentContentProvider(DIAGNOSIS_SCHEME, diagnoses),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (needsRestart((section) => e.affectsConfiguration(section))) {
        void running.restart("settings changed");
      }
    }),
  );
  for (const command of UI_COMMANDS) {
    context.subscriptions.push(vscode.commands.registerCommand(command.id, (arg?: unknown) =>
      uiCommand(command, arg, { run, proposals, layouts, log, server: running, versions })));
  }
  log.info(`CuTeGen ${context.extension.packageJSON.version} activated`);
  void running.start(); // not awaited: activation does not wait for Python; commands wait in ready()
}

export async function deactivate(): Promise<void> {
  await server?.stop();
}

interface Parts {
  run: (command: string, args: unknown[]) => Promise<unknown>;
  proposals: ProposalView;
  layouts: LayoutView;
  log: vscode.LogOutputChannel;
  server: Server;
  versions: VersionsView;
}

async function uiCommand(command: UiCommand, arg: unknown, parts: Parts): Promise<unknown> {
  switch (command.id) {
    case "cutegen.showLog":
      parts.log.show();
      return undefined;
    case "cutegen.restartServer":
      return parts.server.restart("asked for");
    case "cutegen.cancelBackgroundRun":
      return parts.server.cancelBackgroundRun();
    case "cutegen.showLayout":
      return parts.layouts.show(arg);
    case "cutegen.applyPatch":
      return parts.proposals.apply(arg);
    case "cutegen.discardPatch":
      return parts.proposals.discard(arg);
    case "cutegen.refreshVersions":
      return parts.versions.refresh();
    case "cutegen.showVersion":
      return parts.versions.show(arg);
    case "cutegen.restoreVersion":
      return parts.versions.restore(arg);
    case REVIEW_COMMAND: {
      // A quick fix's verified patch: ask the server for it (a fix it has verified returns at once).
      const fixArgs = fixArgumentsForReview([arg]);
      return fixArgs ? parts.run(SERVER.fix, fixArgs) : undefined;
    }
  }
  if (!command.server) {
    return undefined;
  }
  if (command.target === "workspace") {
    const active = vscode.window.activeTextEditor?.document.uri;
    const folder = (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
    if (!folder) {
      void vscode.window.showInformationMessage(`CuTeGen: ${command.title} runs the program in a workspace folder: open one first.`);
      return undefined;
    }
    return parts.run(command.server, [{ uri: folder.uri.toString() }]);
  }
  if (command.target === "reference") {
    const reference = await pickReference(arg);
    return reference ? parts.run(command.server, [{ uri: reference.toString() }]) : undefined;
  }
  const document = await kernelDocument(arg);
  if (!document) {
    void vscode.window.showInformationMessage(`CuTeGen: ${command.title} works on a CUDA kernel: open a .cu file first.`);
    return undefined;
  }
  return parts.run(command.server, documentArgs(document.uri.toString(), document.version));
}

/** The .cu file a command is about: the URI it was given (explorer, editor title) or the active editor's. */
async function kernelDocument(arg: unknown): Promise<vscode.TextDocument | undefined> {
  const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
  if (!uri || uri.scheme !== "file" || !/\.(cu|cuh)$/.test(uri.path)) {
    return undefined;
  }
  return vscode.workspace.openTextDocument(uri);
}

/** A KernelBench reference (.py): the one given, the active one, else one picked in a dialog. */
async function pickReference(arg: unknown): Promise<vscode.Uri | undefined> {
  if (arg instanceof vscode.Uri && arg.path.endsWith(".py")) {
    return arg;
  }
  const active = vscode.window.activeTextEditor?.document.uri;
  if (active?.scheme === "file" && active.path.endsWith(".py")) {
    return active;
  }
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: false,
    openLabel: "Generate Kernel",
    title: "CuTeGen: the KernelBench reference (class Model, get_inputs) to generate a CuTe kernel for",
    filters: { "KernelBench reference": ["py"] },
  });
  return picked?.[0];
}
