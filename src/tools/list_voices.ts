import { z } from "zod";
import { type VoiceList, voicesFollow } from "../client/schemas.js";
import { LIMITS } from "../config/service-limits.js";
import { defineTool } from "../mcp/define-tool.js";
import { nextOut } from "../mcp/fields.js";
import { okResult } from "../mcp/results.js";

export default defineTool({
  name: "list_voices",
  title: "List voices",
  description:
    "Lists voices for generate_audio's parameters.voiceProfileId: private uploaded ones (voice_clone) or approved public ones (speech), 50 a page. Free.",
  inputSchema: z.strictObject({
    scope: z.enum(["mine", "explore"]).optional().describe("mine (private; default) or explore (public)."),
    page: z
      .number()
      .int()
      .min(LIMITS.voice.pageMin)
      .max(LIMITS.voice.pageMax)
      .optional()
      .describe("Page number."),
    language: z.string().min(1).max(64).optional().describe("Only voices of this language."),
  }),
  outputSchema: z.looseObject({
    voices: z.array(z.looseObject({ id: z.string(), name: z.string() })),
    next: nextOut,
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async handler(args, ctx, engine) {
    const list = await engine.client.listVoices(args, { signal: ctx.signal });
    const { voices, ...pagination } = list;
    const scope = args.scope ?? "mine";
    const text = [
      `${voices.length} voice${voices.length === 1 ? "" : "s"} (${scope}, page ${args.page ?? 1}).`,
      ...voices.map((v) => `- ${v.id}: ${v.name}`),
      Object.keys(pagination).length ? `Pagination: ${JSON.stringify(pagination)}` : "",
      morePages(list, args.page ?? 1),
    ].filter(Boolean);
    // One step, with the next page where there is one: the text's "More:" line, said again in `next`.
    const more = morePages(list, args.page ?? 1);
    const next = `${stepAfter(scope, voices.length, args.page ?? 1)}${more ? ` ${more.replace(/^More: c/, "C")}` : ""}`;
    return okResult(text.join("\n"), { ...list, next });
  },
});

function morePages(list: VoiceList, page: number): string {
  if (!voicesFollow(list) || page >= LIMITS.voice.pageMax) return "";
  return `More: call list_voices with page: ${page + 1} (same scope and language) for the next voices.`;
}

function stepAfter(scope: "mine" | "explore", count: number, page: number): string {
  if (count > 0) {
    return scope === "mine"
      ? "pass a voice id as parameters.voiceProfileId to generate_audio with operation voice_clone (or speech)."
      : "pass a voice id as parameters.voiceProfileId to generate_audio with operation speech.";
  }
  if (page > 1) return "this page is past the last one; call list_voices with a lower page.";
  return scope === "mine"
    ? "this key has no private voices yet. Call list_voices with scope explore for approved public voices (operation speech), or upload_voice to add one of your own (operation voice_clone)."
    : "no public voice matches; call list_voices with scope explore and no language filter.";
}
