// The language server's process and client: start, restart on relevant settings, stop; the middleware
// that routes every server command (palette, CodeLens, quick fix) through the extension's runner and
// tells the status bar when a file is being checked.

import * as fs from "fs";
import * as os from "os";
import * as vscode from "vscode";
import {
  Executable, LanguageClient, LanguageClientOptions, Middleware, RevealOutputChannelOn,
  ShowMessageNotification, MessageType, State, WorkDoneProgressCancelNotification,
} from "vscode-languageclient/node";

import { SECTION, VENV_ANSWERS_KEY, VenvAnswer, resolvePython, serverArgs, serverEnv } from "./core/config";
import { LOOP_NOTIFICATION, LoopStatus, parseLoopEvent } from "./core/loop";
import { MessageGate } from "./core/messages";
import { diagnosticsVerdict, typingVerdict } from "./core/results";
import { StatusModel } from "./core/status";
import { REVIEW_COMMAND, SERVER, baseName, reviewArguments, reviewTitle } from "./core/commands";

export type CommandHook = (command: string, args: unknown[]) => Promise<unknown>;

const CHECK_GRACE_S = 30; // a check the server never answers stops counting as "checking" after its timeout + this

export class Server implements vscode.Disposable {
  client: LanguageClient | undefined;
  private starting: Promise<LanguageClient | undefined> | undefined;
  private checking = new Map<string, { handle: number; timer: NodeJS.Timeout }>();
  private commandHook: CommandHook | undefined;
  private stateListener: vscode.Disposable | undefined;
  private failed = false; // the last start failed: the status bar keeps saying so
  private readonly asked = new Set<string>(); // workspace interpreters asked about in this window
  /** The background loop's runs (test → time → profile after a save) in the status bar. */
  private readonly loop: LoopStatus;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly status: StatusModel,
    private readonly messages: MessageGate,
    /** The extension's globalState: the user's answers about workspace interpreters (per machine, not per repo). */
    private readonly memory: vscode.Memento,
  ) {
    this.loop = new LoopStatus(status);
  }

  /** Every server command goes through this (set once the runner exists). */
  setCommandHook(hook: CommandHook): void {
    this.commandHook = hook;
  }

  /** The running client, starting it if needed; undefined if the server cannot start. */
  async ready(): Promise<LanguageClient | undefined> {
    if (this.client?.isRunning()) {
      return this.client;
    }
    if (this.starting) {
      return this.starting;
    }
    const client = this.client;
    if (client && client.state === State.Starting) {
      // vscode-languageclient is restarting it after a crash: wait for that one, start no second server.
      try {
        await client.start();
        return client;
      } catch {
        return undefined;
      }
    }
    return this.start();
  }

  /** Whether the running server advertises a command (the agent's commands arrive over time). */
  advertises(command: string): boolean {
    const commands = this.client?.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
    return commands.includes(command);
  }

  start(): Promise<LanguageClient | undefined> {
    if (!this.starting) {
      this.starting = this.doStart().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  private async doStart(): Promise<LanguageClient | undefined> {
    const config = vscode.workspace.getConfiguration(SECTION);
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const answers = this.memory.get<Record<string, VenvAnswer>>(VENV_ANSWERS_KEY, {});
    const python = resolvePython(config.get<string>("python"), folders, (f) => fs.existsSync(f), { home: os.homedir() },
      answers);
    if (python.ask) {
      void this.askAboutInterpreter(python.ask);
    }
    const args = ["-m", "cutegen", "lsp", ...serverArgs(config.get("serverArgs"))];
    const executable: Executable = {
      command: python.command,
      args,
      // No `transport`: stdio without the `--stdio` flag, which `cutegen lsp` does not take.
      options: {
        cwd: folders[0],
        env: { ...process.env, ...serverEnv(config.get("serverEnv")), PYTHONUNBUFFERED: "1" },
      },
    };
    this.log.info(`starting the language server: ${python.command} ${args.join(" ")} (interpreter from ${python.source})`);
    this.status.setServer("starting");

    const old = this.client;
    if (old) {
      this.client = undefined;
      await old.dispose().catch(() => undefined); // a client that failed or gave up restarting
    }
    const client = new LanguageClient("cutegen", "CuTeGen", { run: executable, debug: executable }, this.clientOptions());
    client.onNotification(ShowMessageNotification.type, (params) => this.showMessage(params.type, params.message));
    client.onNotification(LOOP_NOTIFICATION, (params: unknown) => {
      const event = parseLoopEvent(params);
      if (event) {
        this.loop.onEvent(event);
      }
    });
    this.stateListener?.dispose();
    this.stateListener = client.onDidChangeState((e) => {
      if (client !== this.client) {
        return;
      }
      if (e.newState === State.Running) {
        this.status.setServer("running", python.command);
      } else if (e.newState === State.Stopped && !this.failed) {
        this.status.setServer("stopped");
        this.clearChecking();
        this.loop.clear();
      }
    });
    this.client = client;
    this.failed = false;
    try {
      await client.start();
    } catch (e) {
      this.failed = true;
      const detail = e instanceof Error ? e.message : String(e);
      this.log.error(`the language server did not start: ${detail}`);
      this.status.setServer("failed", detail);
      void vscode.window.showErrorMessage(
        `CuTeGen: the language server did not start with ${python.command} (${python.source}). ` +
        "It needs Python ≥ 3.11 with CuTeGen installed (`pip install .` in its checkout); set `cutegen.python` to such an interpreter.",
        "Open Settings", "Show Log",
      ).then((choice) => {
        if (choice === "Open Settings") {
          void vscode.commands.executeCommand("workbench.action.openSettings", "cutegen.python");
        } else if (choice === "Show Log") {
          this.log.show();
        }
      });
      return undefined;
    }
    const commands = client.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
    this.log.info(`language server running (${client.initializeResult?.serverInfo?.name ?? "?"} ` +
      `${client.initializeResult?.serverInfo?.version ?? ""}); commands: ${commands.join(", ")}`);
    return client;
  }

  /** A workspace's `.venv` is a program from the repository: run it only if the user says so (asked once per
   * path and window, the answer remembered in globalState); meanwhile the server runs on python3 from PATH. */
  private async askAboutInterpreter(candidate: string): Promise<void> {
    if (this.asked.has(candidate)) {
      return;
    }
    this.asked.add(candidate);
    const choice = await vscode.window.showWarningMessage(
      `CuTeGen: run the language server with this workspace's Python, ${candidate}? It is a program from the ` +
      "workspace folder; until you choose, CuTeGen uses python3 from PATH (or set cutegen.python).",
      "Use It", "Not This One");
    if (!choice) {
      return; // dismissed: asked again in the next window
    }
    const answers = { ...this.memory.get<Record<string, VenvAnswer>>(VENV_ANSWERS_KEY, {}) };
    answers[candidate] = choice === "Use It" ? "use" : "ignore";
    await this.memory.update(VENV_ANSWERS_KEY, answers);
    if (choice === "Use It") {
      await this.restart(`${candidate} chosen to run the language server`);
    }
  }

  /** Stop the newest background run with the standard work-done cancel (VS Code shows server progress in the
   * window's status area, which has no Cancel button). */
  async cancelBackgroundRun(): Promise<void> {
    const token = this.loop.token();
    if (!token || !this.client?.isRunning()) {
      void vscode.window.showInformationMessage("CuTeGen: no background run is running.");
      return;
    }
    await this.client.sendNotification(WorkDoneProgressCancelNotification.type, { token });
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.clearChecking();
    if (client) {
      try {
        await client.stop(5000);
      } catch (e) {
        this.log.warn(`stopping the language server: ${e instanceof Error ? e.message : String(e)}`);
      }
      this.status.setServer("stopped");
    }
  }

  async restart(reason: string): Promise<void> {
    this.log.info(`restarting the language server: ${reason}`);
    await this.starting?.catch(() => undefined);
    await this.stop();
    await this.start();
  }

  dispose(): void {
    void this.stop();
    this.stateListener?.dispose();
  }

  private clientOptions(): LanguageClientOptions {
    return {
      documentSelector: [
        { scheme: "file", language: "cuda-cpp" },
        { scheme: "file", pattern: "**/*.{cu,cuh}" },
        // KernelBench ModelNew files: the server checks their load_inline CUDA strings and ignores other Python.
        { scheme: "file", language: "python" },
      ],
      synchronize: { configurationSection: SECTION },
      outputChannel: this.log,
      traceOutputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      middleware: this.middleware(),
    };
  }

  private middleware(): Middleware {
    return {
      executeCommand: async (command, args, next) =>
        this.commandHook ? this.commandHook(command, args) : next(command, args),
      // A quick fix that would apply a verified patch at once opens it as a diff first.
      provideCodeActions: async (document, range, context, token, next) =>
        reviewFirst(await next(document, range, context, token)),
      didOpen: async (document, next) => {
        this.beginCheck(document);
        return next(document);
      },
      didChange: async (event, next) => {
        this.loop.changed(event.document.uri.toString(), event.document.version);
        return next(event);
      },
      didSave: async (document, next) => {
        this.beginCheck(document);
        return next(document);
      },
      didClose: async (document, next) => {
        this.endCheck(document.uri.toString());
        return next(document);
      },
      handleDiagnostics: (uri, diagnostics, next) => {
        next(uri, diagnostics);
        const key = uri.toString();
        const errors = diagnostics.filter((d) => d.severity === vscode.DiagnosticSeverity.Error).length;
        const warnings = diagnostics.filter((d) => d.severity === vscode.DiagnosticSeverity.Warning).length;
        // With unsaved edits what shows is about text nvcc has not seen (errors while typing): never "compiles".
        const unsaved = vscode.workspace.textDocuments.some((d) => d.uri.toString() === key && d.isDirty);
        if (this.checking.has(key) || unsaved) {
          this.endCheck(key);
          this.status.setVerdict((unsaved ? typingVerdict : diagnosticsVerdict)(baseName(key), errors, warnings));
        }
      },
    };
  }

  /** The server checks .cu files on open and save: "checking" until it publishes for that file. */
  private beginCheck(document: vscode.TextDocument): void {
    if (document.uri.scheme !== "file" || !document.uri.path.endsWith(".cu")) {
      return;
    }
    const key = document.uri.toString();
    this.endCheck(key);
    const timeout = vscode.workspace.getConfiguration(SECTION).get<number>("checkTimeout", 120) + CHECK_GRACE_S;
    const handle = this.status.begin("checking", baseName(key));
    const timer = setTimeout(() => this.endCheck(key), timeout * 1000);
    this.checking.set(key, { handle, timer });
  }

  private endCheck(key: string): void {
    const entry = this.checking.get(key);
    if (entry) {
      clearTimeout(entry.timer);
      this.checking.delete(key);
      this.status.end(entry.handle);
    }
  }

  private clearChecking(): void {
    for (const key of [...this.checking.keys()]) {
      this.endCheck(key);
    }
  }

  private showMessage(type: MessageType, message: string): void {
    const informational = type !== MessageType.Error && type !== MessageType.Warning;
    this.messages.offer(message, informational, () => show(type, message));
  }
}

function show(type: MessageType, message: string): void {
  if (type === MessageType.Error) {
    void vscode.window.showErrorMessage(message);
  } else if (type === MessageType.Warning) {
    void vscode.window.showWarningMessage(message);
  } else {
    void vscode.window.showInformationMessage(message);
  }
}

/** Code actions whose command is the server's applyPatch run the extension's review command instead. */
function reviewFirst(actions: (vscode.Command | vscode.CodeAction)[] | null | undefined) {
  for (const action of actions ?? []) {
    const command = action instanceof vscode.CodeAction ? action.command : (action as vscode.Command);
    if (command?.command === SERVER.applyPatch) {
      const diagnostic = action instanceof vscode.CodeAction ? action.diagnostics?.[0] : undefined;
      command.arguments = reviewArguments(command.arguments ?? [], (diagnostic as { data?: unknown } | undefined)?.data);
      command.command = REVIEW_COMMAND;
      if (action instanceof vscode.CodeAction) {
        action.title = reviewTitle(action.title);
      }
    }
  }
  return actions;
}
