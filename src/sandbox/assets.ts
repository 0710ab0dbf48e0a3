/**
 * Assets: uploaded media and task outputs, owned by one key. Files are served by the sandbox
 * itself under signed, expiring URLs (HMAC over asset id and expiry), without authentication,
 * the way the real service hands out signed output URLs.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { fileTypeFromBuffer } from "file-type";
import { parseBuffer } from "music-metadata";
import { LIMITS } from "../config/service-limits.js";
import { withArticle } from "../shared/wording.js";
import { readBody } from "./body.js";
import { mp4Duration } from "./media/duration.js";
import { errorResponse, invalid, invalidReference, notFound, Refusal } from "./sandbox-errors.js";

export type AssetKind = "image" | "video" | "audio";

export interface AssetRecord {
  id: string;
  ownerId: string;
  kind: AssetKind;
  mimeType: string;
  /** Sandbox time from which the asset is `ready` (uploads: after processing; outputs: task end). */
  readyAt: number;
  filename?: string;
  bytes?: Uint8Array;
  render?: () => Uint8Array;
}

/** Signed URLs live this long in sandbox time; re-reading the task signs afresh. */
export const URL_TTL_MS = 10 * 60_000;
/** How long an upload stays `processing` before it is `ready`. */
export const UPLOAD_PROCESSING_MS = 1_000;
const FILES_PREFIX = "/sandbox/files/";

// Containers whose sniffed MIME says video while the upload may honestly be audio, or back.
const AV_CONTAINERS = new Set(["webm", "mp4", "m4a", "ogg", "oga", "opus", "mkv", "mov", "3gp"]);

export class AssetStore {
  private readonly byId = new Map<string, AssetRecord>();
  constructor(
    private readonly secret: string,
    private readonly nextId: () => string,
  ) {}

  add(record: Omit<AssetRecord, "id">): AssetRecord {
    const full = { ...record, id: this.nextId() };
    this.byId.set(full.id, full);
    return full;
  }

  get(id: string): AssetRecord | undefined {
    return this.byId.get(id);
  }

  bytesOf(a: AssetRecord): Uint8Array {
    if (!a.bytes && a.render) a.bytes = a.render();
    return a.bytes ?? new Uint8Array(0);
  }

  /**
   * Seconds of audio or video, read from the bytes; undefined when they do not say. An MP4 or
   * MOV (an ISO BMFF file: `ftyp` first) says it in its movie header, with or without an audio
   * track; other formats are left to music-metadata.
   */
  async durationOf(a: AssetRecord): Promise<number | undefined> {
    const bytes = this.bytesOf(a);
    const isoBmff = Buffer.from(bytes.subarray(4, 8)).toString("latin1") === "ftyp";
    const fromHeader = isoBmff ? mp4Duration(bytes) : undefined;
    if (fromHeader !== undefined) return fromHeader;
    try {
      const meta = await parseBuffer(
        bytes,
        { mimeType: a.mimeType, size: bytes.byteLength },
        { duration: true },
      );
      return meta.format.duration;
    } catch {
      return undefined;
    }
  }

  private signature(id: string, exp: number): string {
    return createHmac("sha256", this.secret).update(`${id}.${exp}`).digest("base64url");
  }

  signedUrl(a: AssetRecord, origin: string, now: number): string {
    const exp = Math.floor((now + URL_TTL_MS) / 1000);
    return `${origin}${FILES_PREFIX}${encodeURIComponent(a.id)}?exp=${exp}&sig=${this.signature(a.id, exp)}`;
  }

  /** The asset as an upload answers it (docs/service.md#uploads). */
  view(a: AssetRecord, origin: string, now: number): Record<string, unknown> {
    const ready = now >= a.readyAt;
    return {
      id: a.id,
      kind: a.kind,
      state: ready ? "ready" : "processing",
      url: ready ? this.signedUrl(a, origin, now) : null,
    };
  }

  /**
   * An owned reference of an allowed kind, or 422 INVALID_REFERENCE naming the field. Readiness
   * is checked separately (`ensureReady`) so every bad reference is reported before "wait".
   */
  reference(ownerId: string, id: string, field: string, kinds: readonly AssetKind[]): AssetRecord {
    const a = this.byId.get(id);
    if (!a || a.ownerId !== ownerId) {
      throw invalidReference(`${field}: ${JSON.stringify(id)} is not an asset owned by this key.`);
    }
    if (!kinds.includes(a.kind)) {
      throw invalidReference(
        `${field}: asset ${id} is ${withArticle(a.kind)} asset; expected ${kinds.map(withArticle).join(" or ")}.`,
      );
    }
    return a;
  }

  ensureReady(refs: readonly AssetRecord[], now: number): void {
    const waiting = refs.filter((a) => now < a.readyAt).map((a) => a.id);
    if (waiting.length > 0) {
      throw new Refusal(409, "REFERENCES_PROCESSING", `References not ready yet: ${waiting.join(", ")}.`);
    }
  }

  /** POST /api/generate/assets: raw bytes, type checked by header and by the bytes themselves. */
  async upload(req: Request, ownerId: string, now: number): Promise<AssetRecord> {
    const declared = (req.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
    const kind = declared.split("/")[0];
    if (kind !== "image" && kind !== "video" && kind !== "audio") {
      throw invalid("Content-Type must be an image/*, video/* or audio/* type.");
    }
    const bytes = await readBody(req, LIMITS.asset.maxBytes, "The upload");
    if (bytes.byteLength === 0) throw invalid("The upload is empty.");
    const sniffed = await fileTypeFromBuffer(bytes);
    const sniffedKind = sniffed?.mime.split("/")[0];
    const agrees =
      sniffed !== undefined &&
      (sniffedKind === kind ||
        (AV_CONTAINERS.has(sniffed.ext) && kind !== "image" && sniffedKind !== "image"));
    if (!agrees) {
      throw invalid(
        `The bytes are ${sniffed ? sniffed.mime : "not a recognised media format"}, not ${declared}.`,
      );
    }
    const filename = req.headers.get("x-filename")?.slice(0, LIMITS.asset.filename);
    return this.add({
      ownerId,
      kind,
      mimeType: declared,
      readyAt: now + UPLOAD_PROCESSING_MS,
      bytes,
      ...(filename ? { filename } : {}),
    });
  }

  isFileRoute(pathname: string): boolean {
    return pathname.startsWith(FILES_PREFIX);
  }

  /** GET/HEAD /sandbox/files/{id}?exp&sig: no auth, the signature is the permission. */
  serve(req: Request, url: URL, now: number): Response {
    const id = decodeURIComponent(url.pathname.slice(FILES_PREFIX.length));
    const exp = Number(url.searchParams.get("exp"));
    const sig = url.searchParams.get("sig") ?? "";
    const expected = Buffer.from(this.signature(id, exp));
    const given = Buffer.from(sig);
    const head = req.method === "HEAD";
    const deny = (message: string, code: string): Response =>
      head ? new Response(null, { status: 403 }) : errorResponse(403, message, code);
    if (!Number.isFinite(exp) || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return deny("The signed URL is invalid.", "INVALID_SIGNATURE");
    }
    if (now > exp * 1000) return deny("The signed URL has expired; read the task again.", "URL_EXPIRED");
    const a = this.byId.get(id);
    if (!a || now < a.readyAt) {
      const r = notFound("No such file.");
      return head ? new Response(null, { status: 404 }) : errorResponse(404, r.message, r.code);
    }
    const bytes = this.bytesOf(a);
    const headers = {
      "content-type": a.mimeType,
      "content-length": String(bytes.byteLength),
      "cache-control": "private, max-age=60",
    };
    return new Response(head ? null : bytes, { status: 200, headers });
  }
}
