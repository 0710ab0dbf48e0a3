/**
 * Voices: a public `explore` catalog (120 voices in six languages, so paging and the language
 * filter matter) and each key's uploaded private drafts in `mine`.
 */
import { fileTypeFromBuffer } from "file-type";
import { LIMITS } from "../config/service-limits.js";
import { byteSize } from "../shared/wording.js";
import { readBody } from "./body.js";
import { invalid, Refusal, tooLarge } from "./sandbox-errors.js";

export interface VoiceRecord {
  id: string;
  name: string;
  language: string;
  ownerId?: string;
  createdAt: number;
}

export const VOICE_LANGUAGES = ["en", "es", "fr", "de", "ja", "pt"] as const;
const NAMES = [
  "Ava",
  "Ben",
  "Clara",
  "Dev",
  "Elena",
  "Femi",
  "Gus",
  "Hana",
  "Ivo",
  "Jun",
  "Kira",
  "Leo",
  "Mara",
  "Nico",
  "Olu",
  "Pia",
  "Quinn",
  "Rui",
  "Sana",
  "Theo",
]; // prettier-ignore
const STYLES = ["warm", "bright", "calm", "crisp"];
// Magic bytes of the formats a voice upload accepts (docs/service.md#uploads):
// MP3, WAV, OGG, M4A, AAC, FLAC, WebM.
const VOICE_FORMATS = new Set(["mp3", "wav", "ogg", "oga", "opus", "m4a", "mp4", "aac", "flac", "webm"]);
const MULTIPART_OVERHEAD = 64 * 1024;

export class VoiceStore {
  readonly explore: VoiceRecord[] = VOICE_LANGUAGES.flatMap((lang) =>
    NAMES.map((n, i) => ({
      id: `voice_${lang}_${String(i + 1).padStart(2, "0")}`,
      name: `${n} (${STYLES[i % STYLES.length]}, ${lang})`,
      language: lang,
      createdAt: 0,
    })),
  );
  private readonly mine: VoiceRecord[] = [];
  constructor(private readonly nextId: () => string) {}

  /** A voice the key may speak with: public, or its own. */
  usable(ownerId: string, id: string): VoiceRecord | undefined {
    return this.explore.find((v) => v.id === id) ?? this.ownPrivate(ownerId, id);
  }

  ownPrivate(ownerId: string, id: string): VoiceRecord | undefined {
    return this.mine.find((v) => v.id === id && v.ownerId === ownerId);
  }

  list(ownerId: string, url: URL): Record<string, unknown> {
    for (const name of url.searchParams.keys()) {
      if (!["scope", "page", "language"].includes(name)) throw invalid(`${name}: unknown query parameter.`);
    }
    const scope = url.searchParams.get("scope") ?? "mine";
    if (scope !== "mine" && scope !== "explore") throw invalid("scope: must be `mine` or `explore`.");
    const pageText = url.searchParams.get("page") ?? "1";
    const page = Number(pageText);
    if (!/^\d+$/.test(pageText) || page < LIMITS.voice.pageMin || page > LIMITS.voice.pageMax) {
      throw invalid(`page: must be an integer from ${LIMITS.voice.pageMin} to ${LIMITS.voice.pageMax}.`);
    }
    const language = url.searchParams.get("language")?.toLowerCase();
    if (
      language !== undefined &&
      !(VOICE_LANGUAGES as readonly string[]).includes(language.split("-")[0] ?? "")
    ) {
      throw invalid(`language: unsupported; supported: ${VOICE_LANGUAGES.join(", ")}.`);
    }
    const pool = scope === "explore" ? this.explore : this.mine.filter((v) => v.ownerId === ownerId);
    const matching = language ? pool.filter((v) => v.language === language.split("-")[0]) : pool;
    const perPage = LIMITS.voice.perPage;
    const slice = matching.slice((page - 1) * perPage, page * perPage);
    return {
      voices: slice.map((v) => this.view(v)),
      page,
      perPage,
      total: matching.length,
      hasMore: page * perPage < matching.length,
    };
  }

  view(v: VoiceRecord): Record<string, unknown> {
    return v.ownerId
      ? { id: v.id, name: v.name, language: v.language, visibility: "private", status: "draft" }
      : { id: v.id, name: v.name, language: v.language, visibility: "public" };
  }

  /** POST /api/generate/voices: multipart with exactly file, duration, rightsConfirmed. */
  async upload(req: Request, ownerId: string, now: number): Promise<VoiceRecord> {
    const type = req.headers.get("content-type") ?? "";
    if (!/^multipart\/form-data;\s*boundary=/i.test(type)) {
      throw invalid("Content-Type must be multipart/form-data with a boundary.");
    }
    const raw = await readBody(req, LIMITS.voice.maxBytes + MULTIPART_OVERHEAD, "The voice upload");
    let form: FormData;
    try {
      form = await new Response(raw, { headers: { "content-type": type } }).formData();
    } catch {
      throw new Refusal(400, "INVALID_REQUEST", "The multipart body could not be parsed.");
    }
    for (const name of new Set(form.keys())) {
      if (!["file", "duration", "rightsConfirmed"].includes(name)) throw invalid(`${name}: unknown field.`);
    }
    for (const name of ["file", "duration", "rightsConfirmed"]) {
      if (form.getAll(name).length !== 1) throw invalid(`${name}: required exactly once.`);
    }
    const file = form.get("file");
    if (typeof file === "string" || file === null) throw invalid("file: must be a file part.");
    if (file.size > LIMITS.voice.maxBytes) {
      throw tooLarge(`file: ${byteSize(file.size)}; the limit is ${byteSize(LIMITS.voice.maxBytes)}.`);
    }
    if (file.size < LIMITS.voice.minBytes) throw invalid("file: is empty.");
    const durationText = form.get("duration");
    const duration = typeof durationText === "string" ? Number(durationText) : Number.NaN;
    const { min, max } = LIMITS.voice.duration;
    if (!(durationText !== "" && duration >= min && duration <= max)) {
      throw invalid(`duration: must be a number of seconds from ${min} to ${max}.`);
    }
    if (form.get("rightsConfirmed") !== "true") {
      throw invalid("rightsConfirmed: must be the literal `true`, after permission to clone the voice.");
    }
    const bytes = new Uint8Array(await file.arrayBuffer());
    const sniffed = await fileTypeFromBuffer(bytes);
    if (!sniffed || !VOICE_FORMATS.has(sniffed.ext)) {
      throw invalid("file: must be MP3, WAV, OGG, M4A, AAC, FLAC or WebM audio (checked by its bytes).");
    }
    const base = file.name.replace(/\.[^.]*$/, "").slice(0, 60) || "Recording";
    const voice: VoiceRecord = {
      id: this.nextId(),
      name: `${base} (private draft)`,
      language: "en",
      ownerId,
      createdAt: now,
    };
    this.mine.push(voice);
    return voice;
  }
}
