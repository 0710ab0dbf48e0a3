import { z } from "zod";
import { LIMITS } from "../service/limits.js";
import { okResult } from "../tooling/results.js";
import { defineTool } from "../tooling/tool.js";

export default defineTool({
  name: "list_voices",
  title: "List voices",
  description:
    "Lists voices for speech: scope mine (the account's private uploaded voices, the default) or explore (approved public voices), 50 per page, optionally by language. Use a voice's id as parameters.voiceProfileId in generate_audio (operation speech, or voice_clone for an uploaded voice). Free: it spends no Gems.",
  inputSchema: z.strictObject({
    scope: z
      .enum(["mine", "explore"])
      .optional()
      .describe("mine (owned private voices; default) or explore (approved public voices)."),
    page: z
      .number()
      .int()
      .min(LIMITS.voice.pageMin)
      .max(LIMITS.voice.pageMax)
      .optional()
      .describe("Page number, 1 to 10,000; 50 voices per page."),
    language: z.string().min(1).max(64).optional().describe("Only voices of this supported language."),
  }),
  outputSchema: z.looseObject({
    voices: z.array(z.looseObject({ id: z.string(), name: z.string() })).describe("Voices with id and name."),
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
