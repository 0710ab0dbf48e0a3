/**
 * Questions a tool asks the client before it sends anything: a confirmation from the
 * user (elicitation) or the client's MCP roots. They are gathered first and returned as
 * ONE input-required result; the SDK asks the client (push requests on 2025-11-25, an
 * input_required round on 2026-07-28) and calls the handler again with the answers.
 * Nothing is submitted before every answer is in, so a re-run never spends twice.
 *
 * A confirmation is bound to what it asked about (src/mcp/answers.ts): the result carries a
 * requestState sealed over the tool, its exact arguments and each question's amount, and an
 * answer counts only when it comes back with that state, for those same arguments and amounts,
 * once. Any other answer (no state, a forged or expired one, other arguments or amount, a state
 * already used) is no answer: the question is asked again, never taken as a yes.
 */
import {
  type InputRequest,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
} from "@modelcontextprotocol/server";
import { LocalRefusal } from "../shared/local-refusals.js";
import { answerCodec, argumentsDigest, honourOnce, newNonce } from "./answers.js";
import type { Engine, ToolContext } from "./context.js";

export type Answer = "yes" | "no" | "pending";

/** A confirmation's form: one box to tick. */
const CONFIRM_SCHEMA = {
  type: "object" as const,
  properties: {
    confirm: {
      type: "boolean" as const,
      title: "Confirm",
      description: "Tick to go ahead; leave it to cancel.",
    },
  },
  required: ["confirm"],
};

/** The user answered no (to spending, to a voice's rights): nothing was sent. */
export class UserDeclinedError extends LocalRefusal {
  override readonly name = "UserDeclinedError";
  constructor(what: string) {
    super(
      "USER_DECLINED",
      `The user declined ${what}; nothing was sent and no Gems were spent.`,
      "Ask the user what to change before trying again.",
    );
  }
}

/** The refusal to throw when the answer to a confirmation of `what` is no. */
export const declined = (what: string): UserDeclinedError => new UserDeclinedError(what);

/** What confirmations are bound to: the engine (its key seals the state), the tool, its arguments. */
export interface Binding {
  engine: Engine;
  tool: string;
  args: unknown;
}

export class Questions {
  private readonly asked: Record<string, InputRequest> = {};
  /** Each confirmation's amount in Gems (null for one about no amount), by key. */
  private readonly amounts: Record<string, number | null> = {};
  /** The arguments' digest, taken when a confirmation needs it (most calls ask nothing). */
  #digest: string | undefined;
  /** Whether this round's state answers this very call (checked, and its nonce used, once). */
  private bound: boolean | undefined;

  constructor(
    private readonly ctx: ToolContext,
    private readonly binding?: Binding,
  ) {}

  private get digest(): string | undefined {
    if (this.binding === undefined) return undefined;
    this.#digest ??= argumentsDigest(this.binding.args);
    return this.#digest;
  }

  /**
   * A yes/no question to the user about `gems` (or about no amount); "pending" until the client
   * answers it with the state it was asked under.
   */
  confirm(key: string, message: string, gems?: number): Answer {
    if (this.binding === undefined) throw new Error("Questions.confirm needs a binding (tool, arguments)");
    const amount = gems ?? null;
    this.amounts[key] = amount;
    const view = inputResponse(this.ctx.inputResponses, key);
    if (view.kind === "elicit" && this.answersThisCall() && this.ctx.answered?.asked[key] === amount) {
      return view.action === "accept" && view.content?.confirm === true ? "yes" : "no";
    }
    this.asked[key] = inputRequired.elicit({ message, requestedSchema: CONFIRM_SCHEMA });
    return "pending";
  }

  /**
   * As `confirm`, but where the question is pushed now (2025-11-25, `ctx.askNow`) it is waited
   * for at most `ms`: "unanswered" when no answer came by then (a late one changes nothing). Asked
   * only once every other question of the round is answered (a round re-runs the call from the
   * start, so a question pushed beside a pending one would be asked twice).
   */
  async confirmWithin(
    key: string,
    message: string,
    gems: number,
    ms: number,
  ): Promise<Answer | "unanswered"> {
    const push = this.ctx.askNow;
    if (push === undefined) return this.confirm(key, message, gems);
    if (this.pending) return "pending";
    const answer = await push({ message, requestedSchema: CONFIRM_SCHEMA }, ms);
    if (answer === "unanswered") return "unanswered";
    return answer.action === "accept" && answer.content?.confirm === true ? "yes" : "no";
  }

  /** The round's verified state was minted for this tool and these exact arguments, and is unused. */
  private answersThisCall(): boolean {
    if (this.bound === undefined) {
      const s = this.ctx.answered;
      this.bound =
        s !== undefined && s.tool === this.binding?.tool && s.args === this.digest && honourOnce(s.nonce);
    }
    return this.bound;
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

  /** The questions as one input-required result, sealed with what they ask about when they confirm. */
  async result(): Promise<InputRequiredResult> {
    const inputRequests = { ...this.asked };
    const confirms = Object.keys(this.amounts).length > 0;
    if (!confirms || this.binding === undefined || this.digest === undefined) {
      return inputRequired({ inputRequests });
    }
    const requestState = await answerCodec(this.binding.engine).mint({
      tool: this.binding.tool,
      args: this.digest,
      asked: { ...this.amounts },
      nonce: newNonce(),
    });
    return inputRequired({ inputRequests, requestState });
  }
}
