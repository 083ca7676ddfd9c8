/**
 * portcullis for pi: every tool call is judged by `portcullis hook pi` before it runs.
 *
 * pi has no permission system of its own; this extension is it. On each `tool_call`
 * it sends the call to portcullis on stdin and reads `{decision, reason}`:
 *   allow -> the call runs; with `input`, it runs with that input instead (a shell call
 *            portcullis runs confined: `portcullis run … -- bash -c '<command>'`);
 *   deny  -> the call is blocked with the reason (the model sees it);
 *   ask   -> with a UI, the person is asked (`ctx.ui.confirm`); without one, blocked.
 * Anything that goes wrong (portcullis missing, a crash, a reply that is not JSON,
 * a timeout) blocks the call: fail closed.
 *
 * Install: `portcullis install pi` (project: .pi/extensions/portcullis.ts, or
 * --user: ~/.pi/agent/extensions/portcullis.ts). It writes the absolute path of
 * the portcullis binary on the line below. No dependencies: Node built-ins only.
 */

import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";

const PORTCULLIS_BIN = "portcullis";

/** How long one decision may take: with `on_ask = "hold"` a person may be deciding. */
const TIMEOUT_MS = 120_000;

/** The parts of pi's extension API this extension uses (pi's own types are not imported). */
interface ToolCallEvent {
  type: "tool_call";
  toolName: string;
  toolCallId: string;
  input: unknown;
}

interface ExtensionContext {
  cwd?: string;
  hasUI?: boolean;
  ui?: { confirm(title: string, message: string): Promise<boolean> };
  sessionManager?: { getSessionId?: () => string | undefined };
}

interface BlockResult {
  block: true;
  reason: string;
}

interface ExtensionAPI {
  on(
    event: "tool_call",
    handler: (event: ToolCallEvent, ctx: ExtensionContext) => Promise<BlockResult | undefined>,
  ): void;
}

interface Verdict {
  decision: "allow" | "ask" | "deny";
  reason: string;
  /** The input the call runs with instead of its own (allow only). */
  input?: Record<string, unknown>;
}

/** When pi does not say which session this is, one id for the life of the process. */
const PROCESS_SESSION = `pi-${process.pid}-${randomUUID()}`;

function sessionId(ctx: ExtensionContext): string {
  try {
    const id = ctx.sessionManager?.getSessionId?.();
    if (typeof id === "string" && id.length > 0) {
      return id;
    }
  } catch {
    // fall through to the per-process id
  }
  return PROCESS_SESSION;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Runs `portcullis hook pi` with `payload` on stdin; resolves with its stdout. */
function runHook(payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | undefined, out?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(out ?? "");
    };
    const child = spawn(PORTCULLIS_BIN, ["hook", "pi"], { stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish(new Error(`no answer from ${PORTCULLIS_BIN} within ${TIMEOUT_MS / 1000} s`));
    }, TIMEOUT_MS);
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => err.push(d));
    child.on("error", (e: Error) => finish(new Error(`cannot run ${PORTCULLIS_BIN}: ${e.message}`)));
    child.on("close", (code: number | null, signal: string | null) => {
      const stdout = Buffer.concat(out).toString("utf8");
      if (code !== 0) {
        const stderr = Buffer.concat(err).toString("utf8").trim();
        const how = code === null ? `was killed (${signal})` : `exited ${code}`;
        finish(new Error(`${PORTCULLIS_BIN} ${how}${stderr ? `: ${stderr}` : ""}`));
        return;
      }
      finish(undefined, stdout);
    });
    child.stdin.on("error", () => {
      // The child exited before reading everything: its exit status tells why.
    });
    child.stdin.end(payload);
  });
}

/** The reply, checked: anything but `{decision: allow|ask|deny, reason?}` is an error. */
function parseVerdict(stdout: string): Verdict {
  const reply: unknown = JSON.parse(stdout.trim());
  if (typeof reply !== "object" || reply === null) {
    throw new Error("the reply is not a JSON object");
  }
  const { decision, reason, input } = reply as { decision?: unknown; reason?: unknown; input?: unknown };
  if (decision !== "allow" && decision !== "ask" && decision !== "deny") {
    throw new Error(`the reply has no valid decision: ${stdout.trim().slice(0, 200)}`);
  }
  const text = typeof reason === "string" && reason.length > 0 ? reason : `portcullis: ${decision}`;
  if (input === undefined) {
    return { decision, reason: text };
  }
  if (decision !== "allow" || typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new Error("the reply's input is not an object on an allow");
  }
  return { decision, reason: text, input: input as Record<string, unknown> };
}

async function judge(event: ToolCallEvent, ctx: ExtensionContext): Promise<Verdict> {
  const payload = JSON.stringify({
    toolName: event.toolName,
    toolCallId: event.toolCallId,
    input: event.input,
    cwd: ctx.cwd ?? process.cwd(),
    session_id: sessionId(ctx),
    has_ui: ctx.hasUI === true,
    // This extension applies a rewritten input (portcullis confines shell calls so).
    rewrites: true,
  });
  return parseVerdict(await runHook(payload));
}

export default function (pi: ExtensionAPI) {
  pi.on("tool_call", async (event, ctx) => {
    try {
      const verdict = await judge(event, ctx);
      if (verdict.decision === "allow") {
        if (verdict.input !== undefined) {
          // pi runs the tool with this very object: rewrite it in place.
          const target = event.input;
          if (typeof target !== "object" || target === null || Array.isArray(target)) {
            return { block: true, reason: "portcullis could not rewrite this call to run confined and blocks it" };
          }
          Object.assign(target as Record<string, unknown>, verdict.input);
        }
        return undefined;
      }
      if (verdict.decision === "ask" && ctx.hasUI === true && ctx.ui) {
        const approved = await ctx.ui.confirm("portcullis", verdict.reason);
        return approved ? undefined : { block: true, reason: `${verdict.reason} (not approved)` };
      }
      return { block: true, reason: verdict.reason };
    } catch (e) {
      return { block: true, reason: `portcullis could not judge this call and blocks it: ${message(e)}` };
    }
  });
}
