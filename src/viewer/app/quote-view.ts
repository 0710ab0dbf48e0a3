/**
 * A quote in the view: the call was above the user's confirmation threshold and the host could
 * not ask, so nothing was sent (src/calls/paid/quote.ts). The view shows what it would cost and an
 * Approve button for that exact amount; a click re-issues the very call (the tool the quote names,
 * with the arguments the host gave the view) with the quote's token added, and the answer (the
 * task) replaces the quote. The token binds as on the model's path: same key, tool, arguments and
 * amount, once. Doing nothing spends nothing.
 */
import { h, plural } from "./dom.js";
import type { Host } from "./protocol.js";
import { type CallResult, textOf } from "./types.js";

/** A quote's `structuredContent.approval`: the token and amount, with what the quote says. */
export interface Quoted {
  token: string;
  gems: number;
  tool?: string;
  tell?: string;
}

export function showQuote(
  root: HTMLElement,
  host: Host,
  q: Quoted,
  args: Record<string, unknown> | undefined,
  answered: (result: CallResult) => void,
): void {
  const amount = plural(q.gems, "Gem");
  const status = h("p", { class: "status", role: "status" }, "Nothing was sent and nothing spent yet.");
  const tell = h("p", { class: "quote" }, q.tell ?? `This call needs your approval for up to ${amount}.`);
  root.replaceChildren(tell, status);
  // Without the call's arguments or its tool the view cannot re-issue it: the model's path stays.
  if (args === undefined || q.tool === undefined) {
    status.textContent = "Nothing was sent. Tell the assistant whether to go ahead.";
    return;
  }
  const approve = h("button", { type: "button" }, `Approve ${amount}`);
  approve.addEventListener("click", async () => {
    approve.disabled = true;
    status.textContent = `Sending, at most ${amount}…`;
    try {
      const r = (await host.request("tools/call", {
        name: q.tool,
        arguments: { ...args, approval: q.token },
      })) as CallResult;
      if (r.isError) {
        status.textContent = textOf(r) || "The approval was refused; nothing was sent.";
        return;
      }
      answered(r);
    } catch (err) {
      approve.disabled = false;
      status.textContent = `Not sent: ${(err as Error).message}`;
    }
  });
  root.append(h("p", { class: "actions" }, approve));
}
