/**
 * Prompts, which hosts offer as slash commands: a storyboard (keyframes, then video from them),
 * a voice-over (a script read by a chosen voice) and recovering lost work (from the ledger).
 * Each says what its steps cost in Gems before anything is spent: the catalog's `baseGems`
 * where it has one (a hint; the service sets the real quote at submission), and plainly that
 * the cost is only quoted at submission where it has none.
 */
import { completable, type GetPromptResult, type McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Model } from "../client/schemas.js";
import { LIMITS, VOICE_MODEL_ID } from "../config/service-limits.js";
import type { Engine } from "../mcp/context.js";
import { catalogOf, completeModelId, completeTaskId, completeVoiceId } from "./completions.js";

const MAX_SHOTS = 12;

/** A prompt's message; it may quote the catalog or the ledger, so it is scrubbed of the key. */
const say = (engine: Engine, text: string): GetPromptResult => ({
  messages: [{ role: "user", content: { type: "text", text: engine.client.scrub(text) } }],
});

/** What one image of `model` costs by the catalog, as a phrase. */
function imageCost(models: Model[] | undefined, modelId: string | undefined, count: number): string {
  const quoted = "the service quotes it only at submission (see each task's quotedGems)";
  if (models === undefined) return `The catalog could not be read, so no estimate: ${quoted}.`;
  if (modelId !== undefined) {
    const m = models.find((x) => x.id === modelId);
    if (m?.baseGems === undefined) return `${modelId} has no baseGems in the catalog: ${quoted}.`;
    return `${count} keyframe${count === 1 ? "" : "s"} with ${modelId} cost about ${count * m.baseGems} Gems (${m.baseGems} each, the catalog's baseGems at base resolution; a higher resolution or more outputs cost more, and the service sets the real quote at submission).`;
  }
  const priced = models
    .filter((m) => m.kind === "image" && m.available !== false && m.baseGems !== undefined)
    .map((m) => `${m.id} about ${(m.baseGems ?? 0) * count} Gems`);
  return priced.length > 0
    ? `For ${count} keyframes, by the catalog's baseGems: ${priced.join(", ")} (the real quote is set at submission).`
    : `No image model in the catalog has a baseGems hint: ${quoted}.`;
}

function storyboard(server: McpServer, engine: Engine): void {
  server.registerPrompt(
    "storyboard",
    {
      title: "Storyboard a scene into video",
      description:
        "Splits a scene into shots, generates consistent keyframes, turns each into a video clip, and saves them. Says what it will cost before spending.",
      argsSchema: z.object({
        scene: z.string().min(1).max(LIMITS.mediaPrompt).describe("The scene to film, in a few sentences."),
        shots: z
          .string()
          .regex(/^([1-9]|1[0-2])$/, `a whole number of shots from 1 to ${MAX_SHOTS}`)
          .optional()
          .describe(`How many shots, 1 to ${MAX_SHOTS} (default 4).`),
        imageModel: completable(z.string().describe("Image model ID for the keyframes."), (v) =>
          completeModelId(engine, "image", v ?? ""),
        ).optional(),
        videoModel: completable(z.string().describe("Video model ID for the clips."), (v) =>
          completeModelId(engine, "video", v ?? ""),
        ).optional(),
      }),
    },
    async ({ scene, shots, imageModel, videoModel }) => {
      const n = shots === undefined ? 4 : Number(shots);
      const models = await catalogOf(engine);
      const pick = (kind: string, given: string | undefined) =>
        given
          ? `use ${given}`
          : `choose a ${kind} model with list_models (kind "${kind}") and tell the user which`;
      return say(
        engine,
        [
          `Make a ${n}-shot storyboard of this scene, then a video clip from each shot:`,
          "",
          scene,
          "",
          "Cost, to tell the user and get their go-ahead before spending anything:",
          `- Keyframes: ${imageCost(models, imageModel, n)}`,
          `- Clips: ${n} video submissions; the catalog gives no price for video, so each is quoted only at submission (the task's quotedGems). Pass maxGems to cap each one: the service then refuses (PRICE_CHANGED) rather than spend more.`,
          "",
          "Steps:",
          `1. Models: for keyframes ${pick("image", imageModel)}; for clips ${pick("video", videoModel)}. Check the video model's capabilities (modes must include image-to-video; durations, aspectRatios) and use one aspect ratio for every shot.`,
          `2. Write ${n} shot descriptions that share the same characters, palette, lighting and style words, so the keyframes stay consistent.`,
          "3. Keyframes: call generate_image for shot 1. For the later shots, where the image model takes reference images, pass shot 1's output asset ID in referenceAssetIds to keep the look; otherwise repeat the shared style words.",
          '4. Clips: for each keyframe call generate_video with parameters {"mode": "image-to-video", "sourceImage": <the keyframe\'s asset ID>, "ratio": <the same ratio>, "duration": <a supported duration>} and a prompt describing the motion.',
          "5. Generation tools wait a bounded time: if a task is not finished, call poll_task with its task ID (never submit again; a repeated identical call replays without charging twice).",
          "6. Save: call save_outputs for each finished task, then list the saved files for the user in shot order.",
        ].join("\n"),
      );
    },
  );
}

function voiceOver(server: McpServer, engine: Engine): void {
  server.registerPrompt(
    "voice_over",
    {
      title: "Voice-over from a script",
      description:
        "Reads a script aloud with a chosen voice (list_voices, then generate_audio), and saves the audio.",
      argsSchema: z.object({
        script: z.string().min(1).max(LIMITS.mediaPrompt).describe("The text to read."),
        voiceId: completable(
          z.string().describe("Voice ID (from list_voices); chosen with the user when left out."),
          (v) => completeVoiceId(engine, v ?? ""),
        ).optional(),
      }),
    },
    async ({ script, voiceId }) => {
      const limit = LIMITS.speech.prompt;
      const parts = Math.ceil(script.length / limit);
      const voice = voiceId
        ? `Use voice ${voiceId}.`
        : 'Call list_voices (scope "mine" for the user\'s own voices, "explore" for public ones, with language if the script is not English), show a few to the user and let them choose.';
      return say(
        engine,
        [
          "Record a voice-over of this script:",
          "",
          script,
          "",
          `Cost, to tell the user and get their go-ahead before spending: ${parts} speech request${parts === 1 ? "" : "s"} to ${VOICE_MODEL_ID}; the catalog gives no price for audio, so each is quoted only at submission (the task's quotedGems). Pass maxGems to cap a request: the service then refuses (PRICE_CHANGED) rather than spend more. list_voices is free.`,
          "",
          "Steps:",
          `1. Voice: ${voice}`,
          parts > 1
            ? `2. The script is ${script.length} characters and one speech request takes at most ${limit}: split it at sentence ends into ${parts} parts of at most ${limit} characters each, in order.`
            : `2. The script fits one speech request (at most ${limit} characters).`,
          `3. For each part call generate_audio with {"operation": "speech", "model": "${VOICE_MODEL_ID}", "prompt": <the part>, "parameters": {"voiceProfileId": <the voice ID>}}; speed (0.5 to 2), volume (-6 to 6 dB) and temperature (0 to 1) are optional.`,
          "4. If a task is not finished when the call returns, call poll_task with its task ID; never submit the same part again (an identical call replays it without a second charge).",
          "5. Save each finished task with save_outputs and give the user the files in order.",
        ].join("\n"),
      );
    },
  );
}

function recover(server: McpServer, engine: Engine): void {
  server.registerPrompt(
    "recover_lost_work",
    {
      title: "Recover lost work",
      description:
        "Finds requests whose result was lost (a cut-off call, a restart) in this key's ledger and picks them up without paying twice.",
      argsSchema: z.object({
        taskId: completable(z.string().describe("A task ID to pick up, if known."), (v) =>
          completeTaskId(engine, v ?? ""),
        ).optional(),
      }),
    },
    async ({ taskId }) => {
      const open = await engine.ledger.list(engine.keyHash, { state: "open" }).catch(() => undefined);
      const known =
        open === undefined
          ? "The ledger could not be read just now; list_requests will say why."
          : open.length === 0
            ? "The ledger has no open requests for this key right now."
            : [
                `The ledger has ${open.length} open request${open.length === 1 ? "" : "s"} for this key (newest first):`,
                ...open
                  .slice(0, 10)
                  .map(
                    (r) =>
                      `- ${r.idempotencyKey}: ${r.tool}${r.model ? ` ${r.model}` : ""}, ${r.state}${r.taskId ? `, task ${r.taskId}` : ", no task ID yet"}`,
                  ),
              ].join("\n");
      return say(
        engine,
        [
          taskId
            ? `Pick up task ${taskId} and deliver its result.`
            : "Find and finish work whose result never arrived.",
          "",
          known,
          "",
          "Cost: nothing new. list_requests and poll_task are free; repeating an identical call replays its identity, and the service returns the retained outcome without charging again.",
          "",
          "Steps:",
          taskId
            ? `1. Call poll_task with {"taskId": "${taskId}", "wait": 30}.`
            : "1. Call list_requests: the records in state prepared, sent or uncertain, and succeeded ones whose result was not delivered, are the lost ones.",
          "2. For each request with a task ID: call poll_task with it; once terminal, save_outputs and show the user the result.",
          "3. For a request with no task ID (state prepared, sent or uncertain): repeat the identical call (same tool, same arguments) or pass its idempotencyKey with the same arguments. It replays under the same identity; never change the arguments or drop the idempotencyKey, which would be new work and spend again.",
          "4. A closed request was refused for good (see its reason); doing it now is new work: ask the user first.",
        ].join("\n"),
      );
    },
  );
}

export function registerPrompts(server: McpServer, engine: Engine): void {
  storyboard(server, engine);
  voiceOver(server, engine);
  recover(server, engine);
}
