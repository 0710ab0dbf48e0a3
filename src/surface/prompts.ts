/**
 * Prompts, which hosts offer as slash commands: a storyboard (keyframes, then video from them),
 * a voice-over (a script read by a chosen voice) and recovering lost work (from the ledger).
 * Each says what its steps cost in Gems before anything is spent: the catalog's `baseGems`
 * where it has one (a hint; the service sets the real quote at submission), and plainly that
 * the cost is only quoted at submission where it has none.
 */
import type { GetPromptResult, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Model } from "../client/schemas.js";
import { LIMITS, VOICE_MODEL_ID } from "../config/service-limits.js";
import type { LedgerRecord } from "../ledger/listing.js";
import type { Engine } from "../mcp/context.js";
import { stateWords, storedFilter } from "../mcp/request-view.js";
import { count as countOf, gems, withArticle } from "../shared/wording.js";
import {
  type ArgumentCompleters,
  catalogOf,
  completeModelId,
  completeTaskId,
  completeVoiceId,
} from "./completions.js";

const MAX_SHOTS = 12;

/** A prompt's message; it may quote the catalog or the ledger, so it is scrubbed of the key. */
const say = (engine: Engine, text: string): GetPromptResult => ({
  messages: [{ role: "user", content: { type: "text", text: engine.client.scrub(text) } }],
});

/**
 * A keyframe is made from a prompt alone: an edit model (capabilities.requiresSourceImage, as in
 * src/sandbox/model-catalog.ts) needs an image to start from, so it is never offered for one.
 */
const takesPromptAlone = (m: Model): boolean =>
  (m.capabilities as { requiresSourceImage?: unknown } | undefined)?.requiresSourceImage !== true;

/** What one image of `model` costs by the catalog, as a phrase. */
function imageCost(models: Model[] | undefined, modelId: string | undefined, count: number): string {
  const quoted = "the service quotes it only at submission (see each task's quotedGems)";
  if (models === undefined) return `The catalog could not be read, so no estimate: ${quoted}.`;
  if (modelId !== undefined) {
    const m = models.find((x) => x.id === modelId);
    if (m !== undefined && !takesPromptAlone(m)) {
      return `${modelId} needs a source image (capabilities.requiresSourceImage), so it cannot make keyframes from a prompt: choose an image model that takes a prompt alone.`;
    }
    if (m?.baseGems === undefined) return `${modelId} has no baseGems in the catalog: ${quoted}.`;
    return `${countOf(count, "keyframe")} with ${modelId} cost${count === 1 ? "s" : ""} about ${gems(count * m.baseGems)} (${m.baseGems} each, the catalog's baseGems at base resolution; a higher resolution or more outputs cost more, and the service sets the real quote at submission).`;
  }
  const priced = models
    .filter(
      (m) => m.kind === "image" && m.available !== false && takesPromptAlone(m) && m.baseGems !== undefined,
    )
    .map((m) => `${m.id} about ${gems((m.baseGems ?? 0) * count)}`);
  return priced.length > 0
    ? `For ${countOf(count, "keyframe")}, by the catalog's baseGems: ${priced.join(", ")} (the real quote is set at submission).`
    : `No image model in the catalog has a baseGems hint: ${quoted}.`;
}

/*
 * The prompts' arguments, built once for every server (zod schemas are most of what a prompt
 * costs a server, and a server is built per HTTP session); their completions are answered apart,
 * over each server's engine (PROMPT_COMPLETIONS, completions.ts).
 */
const STORYBOARD_ARGS = z.object({
  scene: z.string().min(1).max(LIMITS.mediaPrompt).describe("The scene to film, in a few sentences."),
  shots: z
    .string()
    .regex(/^([1-9]|1[0-2])$/, `a whole number of shots from 1 to ${MAX_SHOTS}`)
    .optional()
    .describe(`How many shots, 1 to ${MAX_SHOTS} (default 4).`),
  imageModel: z
    .string()
    .describe("Image model ID for the keyframes (one that takes a prompt alone).")
    .optional(),
  videoModel: z.string().describe("Video model ID for the clips.").optional(),
});

const VOICE_OVER_ARGS = z.object({
  script: z.string().min(1).max(LIMITS.mediaPrompt).describe("The text to read."),
  voiceId: z.string().describe("Voice ID (from list_voices); chosen with the user when left out.").optional(),
});

const RECOVER_ARGS = z.object({
  taskId: z.string().describe("A task ID to pick up, if known.").optional(),
});

/** What completion/complete offers for each prompt's arguments, by prompt and argument name. */
export const PROMPT_COMPLETIONS: Readonly<Record<string, ArgumentCompleters>> = {
  storyboard: {
    imageModel: (engine, value) => completeModelId(engine, "image", value, takesPromptAlone),
    videoModel: (engine, value) => completeModelId(engine, "video", value),
  },
  voice_over: { voiceId: (engine, value) => completeVoiceId(engine, value) },
  recover_lost_work: { taskId: (engine, value) => completeTaskId(engine, value) },
};

function storyboard(server: McpServer, engine: Engine): void {
  server.registerPrompt(
    "storyboard",
    {
      title: "Storyboard a scene into video",
      description:
        "Splits a scene into shots, generates consistent keyframes, turns each into a video clip, and saves them. Says what it will cost before spending.",
      argsSchema: STORYBOARD_ARGS,
    },
    async ({ scene, shots, imageModel, videoModel }) => {
      const n = shots === undefined ? 4 : Number(shots);
      const models = await catalogOf(engine);
      const pick = (kind: string, given: string | undefined, which = "") =>
        given
          ? `use ${given}`
          : `choose ${withArticle(kind)} model${which} with list_models (kind "${kind}") and tell the user which`;
      return say(
        engine,
        [
          `Make a ${n}-shot storyboard of this scene, then a video clip from each shot:`,
          "",
          scene,
          "",
          "Cost, to tell the user and get their go-ahead before spending anything:",
          `- Keyframes: ${imageCost(models, imageModel, n)}`,
          `- Clips: ${countOf(n, "video submission")}; the catalog gives no price for video, so each is quoted only at submission (the task's quotedGems). Pass maxGems to cap each one: the service then refuses (PRICE_CHANGED) rather than spend more.`,
          "",
          "Steps:",
          `1. Models: for keyframes ${pick("image", imageModel, " that takes a prompt alone (not an edit model whose capabilities say requiresSourceImage)")}; for clips ${pick("video", videoModel)}. Check the video model's capabilities (modes must include image-to-video; durations, aspectRatios) and use one aspect ratio for every shot.`,
          `2. Write ${n} shot descriptions that share the same characters, palette, lighting and style words, so the keyframes stay consistent.`,
          '3. Keyframes: call generate_image for shot 1. Each output line names its asset ID ("asset ID …"): that ID, not the URL or the generation:// resource URI, is what generation takes. For the later shots, where the image model takes reference images, pass shot 1\'s asset ID in referenceAssetIds to keep the look; otherwise repeat the shared style words.',
          '4. Clips: for each keyframe call generate_video with parameters {"mode": "image-to-video", "sourceImage": <the keyframe\'s asset ID, from its output line>, "ratio": <the same ratio>, "duration": <a supported duration>} and a prompt describing the motion.',
          "5. Generation tools wait a bounded time: if a task is not finished, call poll_task with its task ID. Never submit again: once a call's result has arrived, an identical call is new work and is charged again.",
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
      argsSchema: VOICE_OVER_ARGS,
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
          "4. If a task is not finished when the call returns, call poll_task with its task ID. Never submit the same part again: its result has arrived, so an identical call would be new work, charged again.",
          '5. Save each finished task with save_outputs and give the user the files in order. Each part\'s output line names its asset ID ("asset ID …"): keep them, to pass one as coverAudio for music or in referenceAudios for a video.',
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
        "Finds requests whose result never arrived (a cut-off call, a restart) in this key's ledger and picks them up without paying twice.",
      argsSchema: RECOVER_ARGS,
    },
    async ({ taskId }) => {
      const open = await lostWork(engine);
      const known =
        open === undefined
          ? "The ledger could not be read just now; list_requests will say why."
          : open.length === 0
            ? "The ledger has no open requests and no unfinished tasks for this key right now."
            : [
                `The ledger has ${open.length} request${open.length === 1 ? "" : "s"} to pick up for this key (newest first):`,
                ...open
                  .slice(0, 10)
                  .map(
                    (r) =>
                      `- ${r.idempotencyKey}: ${r.tool}${r.model ? ` ${r.model}` : ""}, ${stateWords(r)}${r.taskId || r.state === "succeeded" ? "" : ", no task ID yet"}`,
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
          "Cost: list_requests and poll_task are free. Repeating the identical call of a request whose result never arrived (its outcome unknown, or not delivered) replays its identity, and the service returns the retained outcome without a second charge. Repeating a call whose result did arrive is new work and is charged again.",
          "",
          "Steps:",
          taskId
            ? `1. Call poll_task with {"taskId": "${taskId}", "wait": 30}.`
            : "1. Call list_requests: the records in state prepared, sent or uncertain, accepted ones whose result was not delivered, and accepted tasks whose taskStatus is not finished (succeeded, partial, failed, cancelled) or was never read, are the ones to pick up.",
          "2. For each request with a task ID, even one whose first answer arrived (a long video may still be running, or have finished unseen): call poll_task with it; once terminal, save_outputs and show the user the result.",
          "3. For a request with no task ID (state prepared, sent or uncertain: its outcome is unknown): repeat the identical call (same tool, same arguments) or pass its idempotencyKey with the same arguments. It replays under the same identity; never change the arguments or drop the idempotencyKey, which would be new work and spend again.",
          "4. A closed request was refused for good; its line in list_requests gives the reason (code and message). Doing it now is new work: ask the user first.",
        ].join("\n"),
      );
    },
  );
}

/**
 * What recover_lost_work lists (list_requests' `open`): the records whose outcome is unknown or
 * whose result was never delivered, and the accepted tasks no tool has seen finish, whose first
 * answer may have reached a conversation that is gone. Undefined when the ledger cannot be read.
 */
async function lostWork(engine: Engine): Promise<LedgerRecord[] | undefined> {
  return engine.ledger.list(engine.keyHash, { state: storedFilter("open") }).catch(() => undefined);
}

export function registerPrompts(server: McpServer, engine: Engine): void {
  storyboard(server, engine);
  voiceOver(server, engine);
  recover(server, engine);
}
