/**
 * Questions a tool asks the client before it sends anything: a confirmation from the
 * user (elicitation) or the client's MCP roots. They are gathered first and returned as
 * ONE input-required result; the SDK asks the client (push requests on 2025-11-25, an
 * input_required round on 2026-07-28) and calls the handler again with the answers.
 * Nothing is submitted before every answer is in, so a re-run never spends twice.
 */
import {
  type InputRequest,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
} from "@modelcontextprotocol/server";
import type { ToolContext } from "./context.js";

export type Answer = "yes" | "no" | "pending";

export class Questions {
  private readonly asked: Record<string, InputRequest> = {};
  constructor(private readonly ctx: ToolContext) {}

  /** A yes/no question to the user; "pending" until the client answers. */
  confirm(key: string, message: string): Answer {
    const view = inputResponse(this.ctx.inputResponses, key);
    if (view.kind === "elicit") {
      return view.action === "accept" && view.content?.confirm === true ? "yes" : "no";
    }
    this.asked[key] = inputRequired.elicit({
      message,
      requestedSchema: {
        type: "object",
        properties: {
          confirm: {
            type: "boolean",
            title: "Confirm",
            description: "Tick to go ahead; leave it to cancel.",
          },
        },
        required: ["confirm"],
      },
    });
    return "pending";
  }

  /**
   * The client's roots as file URIs, `undefined` when it offers none (the configured
   * directories then stand alone), or "pending" until it answers.
   */
  roots(): string[] | undefined | "pending" {
    if (!this.ctx.offersRoots) return undefined;
    const view = inputResponse(this.ctx.inputResponses, "roots");
    if (view.kind === "roots") return view.roots.map((r) => r.uri);
    this.asked.roots = inputRequired.listRoots();
    return "pending";
  }

  get pending(): boolean {
    return Object.keys(this.asked).length > 0;
  }

  result(): InputRequiredResult {
    return inputRequired({ inputRequests: { ...this.asked } });
  }
}
