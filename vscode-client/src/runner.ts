// Runs one server command, whoever asked (palette, CodeLens, quick fix): a progress notification with
// Cancel, the status bar, then the reply: a patch opens as a diff, a message is shown once.

import * as vscode from "vscode";
import { ExecuteCommandRequest, LSPErrorCodes, ResponseError } from "vscode-languageclient/node";

import { PATCH_COMMANDS, SERVER, fileOfArgs } from "./core/commands";
import { diagnosisOf } from "./core/diagnosis";
import { MessageGate, RecentMessages } from "./core/messages";
import { isObject, messageOf, patchOf, verdictOf, wasCancelled } from "./core/results";
import { StatusModel, activityOf } from "./core/status";
import { DiagnosisView } from "./diagnosisView";
import { ProposalView } from "./proposalView";
import { Server } from "./server";

const TITLES: Record<string, string> = {
  checking: "checking", testing: "testing", profiling: "profiling", optimizing: "optimizing",
  fixing: "fixing", tuning: "tuning", generating: "generating a kernel from", restoring: "restoring a version of",
  applying: "applying the patch to", sanitizing: "sanitizing",
};

export class Runner {
  constructor(
    private readonly server: Server,
    private readonly status: StatusModel,
    private readonly proposals: ProposalView,
    private readonly messages: RecentMessages,
    private readonly gate: MessageGate,
    private readonly log: vscode.LogOutputChannel,
    private readonly diagnoses?: DiagnosisView,
  ) {}

  async run(command: string, args: unknown[]): Promise<unknown> {
    const client = await this.server.ready();
    if (!client) {
      return undefined; // the start failure was shown
    }
    if (!this.server.advertises(command)) {
      const name = command.split(".").pop();
      void vscode.window.showWarningMessage(
        `CuTeGen: this version of the language server has no “${name}” command yet (${command}).`);
      return undefined;
    }
    const file = fileOfArgs(args) ?? "workspace";
    const activity = activityOf(command);
    const handle = this.status.begin(activity, file);
    const started = Date.now();
    this.gate.hold();
    this.log.info(`${command} ${JSON.stringify(args).slice(0, 500)}`);
    let reply: unknown;
    try {
      reply = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `CuTeGen: ${TITLES[activity] ?? activity} ${file}`, cancellable: true },
        (_progress, token) => client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }, token),
      );
    } catch (e) {
      if (isCancellation(e)) {
        this.log.info(`${command} cancelled`);
        this.status.setVerdict({ text: `${file}: ${activity} cancelled`, level: "info" });
        return { ok: false, cancelled: true, message: `${activity} ${file} cancelled` };
      }
      const detail = e instanceof Error ? e.message : String(e);
      this.log.error(`${command} failed: ${detail}`);
      this.status.setVerdict({ text: `${file}: ${activity} failed`, level: "error" });
      void vscode.window.showErrorMessage(`CuTeGen: ${activity} ${file} failed: ${detail}`, "Show Log")
        .then((choice) => choice && this.log.show());
      return undefined;
    } finally {
      this.status.end(handle);
      // The server's own message about the reply is dropped when the extension presents the reply.
      this.gate.release([presentsReply(command, reply) ? messageOf(reply) : undefined]);
    }
    this.log.info(`${command} → ${summarize(reply)}`);
    this.status.setVerdict(verdictOf(command, file, reply));

    const patch = PATCH_COMMANDS.has(command) ? patchOf(reply) : undefined;
    const diagnosis = diagnosisOf(command, reply);
    if (patch) {
      await this.proposals.show(patch);
    } else if (diagnosis && this.diagnoses) {
      await this.diagnoses.show(file, diagnosis); // Markdown, rendered
    } else if (presentsReply(command, reply)) {
      await this.proposals.applied(args, messageOf(reply));
    } else {
      this.showReplyMessage(command, reply, started);
    }
    return reply;
  }

  /** A reply's message, unless the server showed it already or a diagnostic says it (check). */
  private showReplyMessage(command: string, reply: unknown, since: number): void {
    const message = messageOf(reply);
    if (!message || wasCancelled(reply) || this.messages.shownSince(message, since)) {
      return;
    }
    if (command === SERVER.check && isObject(reply) && typeof reply.errors === "number") {
      return; // the diagnostics and the status bar say it
    }
    this.messages.record(message);
    if (isObject(reply) && reply.ok === false) {
      void vscode.window.showWarningMessage(`CuTeGen: ${message}`);
    } else {
      void vscode.window.showInformationMessage(`CuTeGen: ${message}`);
    }
  }
}

/** Replies the extension shows its own way: a patch (as a diff), a diagnosis (rendered), an applied patch. */
function presentsReply(command: string, reply: unknown): boolean {
  return (PATCH_COMMANDS.has(command) && patchOf(reply) !== undefined) || diagnosisOf(command, reply) !== undefined ||
    (command === SERVER.applyPatch && isObject(reply) && reply.applied === true);
}

function isCancellation(e: unknown): boolean {
  return e instanceof vscode.CancellationError ||
    (e instanceof ResponseError && (e.code === LSPErrorCodes.RequestCancelled || e.code === LSPErrorCodes.ServerCancelled));
}

function summarize(reply: unknown): string {
  if (!isObject(reply) || !isObject(reply.patch)) {
    return JSON.stringify(reply)?.slice(0, 2000) ?? "undefined";
  }
  const { new_text: _newText, diff, ...rest } = reply.patch;
  return JSON.stringify({ ...reply, patch: rest }) + (typeof diff === "string" ? `\n${diff}` : "");
}
