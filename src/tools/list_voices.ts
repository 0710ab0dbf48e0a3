import { z } from "zod";
import { LIMITS } from "../service/limits.js";
import { okResult } from "../tooling/results.js";
import { defineTool } from "../tooling/tool.js";

export default defineTool({
  name: "list_voices",
  title: "List voices",
  description:
    "Lists voices for generate_audio's parameters.voiceProfileId: private uploaded ones (voice_clone) or approved public ones (speech), 50 a page. Free.",
  inputSchema: z.strictObject({
    scope: z
      .enum(["mine", "explore"])
      .optional()
      .describe("mine (private uploaded; default) or explore (approved public)."),
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
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async handler(args, ctx, engine) {
    const list = await engine.client.listVoices(args, { signal: ctx.signal });
    const { voices, ...pagination } = list;
    const text = [
      `${voices.length} voice${voices.length === 1 ? "" : "s"} (${args.scope ?? "mine"}, page ${args.page ?? 1}).`,
      ...voices.map((v) => `- ${v.id}: ${v.name}`),
      Object.keys(pagination).length ? `Pagination: ${JSON.stringify(pagination)}` : "",
      "Next: pass a voice id as parameters.voiceProfileId to generate_audio with operation speech.",
    ].filter(Boolean);
    return okResult(text.join("\n"), { ...list });
  },
});
