/**
 * What GENERATION_AUTH_SECRET protects, each from its own key derived with HKDF-SHA-256 (so one
 * secret never serves two purposes): service keys at rest (AES-256-GCM, the key hash as
 * associated data, so a sealed key cannot be moved to another account's record), the sign-in
 * cookies (oidc-provider signs them with these keys), the sign-in form's CSRF token (HMAC of the
 * interaction's ID) and the signing key the authorization server keeps in the store.
 * Several secrets rotate: the first seals and signs, every one opens and verifies (docs/oauth.md).
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from "node:crypto";

const derive = (secret: Buffer, purpose: string): Buffer =>
  Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), `generation-mcp oauth ${purpose}`, 32));

/** A short public name for a sealing key, so a sealed value says which secret opens it. */
const keyId = (key: Buffer): string => createHash("sha256").update(key).digest("hex").slice(0, 16);

interface Sealed {
  v: 1;
  kid: string;
  iv: string;
  ct: string;
  tag: string;
}

export class Sealing {
  readonly #sealKeys: Buffer[];
  readonly #csrfKeys: Buffer[];
  /** Keys for oidc-provider's signed cookies (first signs). */
  readonly cookieKeys: string[];

  constructor(secretsBase64: readonly string[]) {
    const secrets = secretsBase64.map((s) => Buffer.from(s, "base64"));
    if (secrets.length === 0) throw new Error("GENERATION_AUTH_SECRET: no secret given");
    this.#sealKeys = secrets.map((s) => derive(s, "seal"));
    this.#csrfKeys = secrets.map((s) => derive(s, "csrf"));
    this.cookieKeys = secrets.map((s) => derive(s, "cookies").toString("base64url"));
  }

  /** Encrypts `plain` bound to `context` (e.g. the key hash): JSON text safe to store. */
  seal(plain: string, context: string): string {
    const key = this.#sealKeys[0] as Buffer;
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    cipher.setAAD(Buffer.from(context, "utf8"));
    const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    const sealed: Sealed = {
      v: 1,
      kid: keyId(key),
      iv: iv.toString("base64url"),
      ct: ct.toString("base64url"),
      tag: cipher.getAuthTag().toString("base64url"),
    };
    return JSON.stringify(sealed);
  }

  /**
   * Decrypts what `seal` made for the same context; undefined when no configured secret opens it
   * (a secret rotated out) or it was tampered with.
   */
  open(text: string, context: string): { plain: string; stale: boolean } | undefined {
    let sealed: Sealed;
    try {
      sealed = JSON.parse(text) as Sealed;
    } catch {
      return undefined;
    }
    const index = this.#sealKeys.findIndex((k) => keyId(k) === sealed.kid);
    const key = this.#sealKeys[index];
    if (key === undefined) return undefined;
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(sealed.iv, "base64url"));
      decipher.setAAD(Buffer.from(context, "utf8"));
      decipher.setAuthTag(Buffer.from(sealed.tag, "base64url"));
      const plain = Buffer.concat([decipher.update(Buffer.from(sealed.ct, "base64url")), decipher.final()]);
      // Sealed under an older secret: the caller re-seals it under the first.
      return { plain: plain.toString("utf8"), stale: index !== 0 };
    } catch {
      return undefined;
    }
  }

  /** The sign-in form's CSRF token for one interaction. */
  csrfToken(uid: string): string {
    return createHmac("sha256", this.#csrfKeys[0] as Buffer)
      .update(uid)
      .digest("base64url");
  }

  csrfValid(uid: string, token: unknown): boolean {
    if (typeof token !== "string") return false;
    const given = Buffer.from(token);
    return this.#csrfKeys.some((k) => {
      const want = Buffer.from(createHmac("sha256", k).update(uid).digest("base64url"));
      return want.length === given.length && timingSafeEqual(want, given);
    });
  }
}

/** The store key of an identifier that is a bearer credential: only its hash is ever stored. */
export const hashId = (id: string): string => createHash("sha256").update(id, "utf8").digest("base64url");
