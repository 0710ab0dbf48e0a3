/**
 * What a loaded configuration holds: the whole of it (Config), and the part tools read
 * (EngineConfig). settings.ts lists how each field is filled; parse.ts fills them.
 */

import type { ServeLimits } from "./serve-limits.js";

/**
 * The part of the configuration tools read (an Engine carries it; src/mcp/context.ts). The
 * configuration sits below every other room, so tools import it and never the reverse.
 */
export interface EngineConfig {
  /**
   * Callers are strangers to this machine (`remoteUsers`): tools touch the server's files only
   * under `files` set explicitly, each key in an area of its own, and MCP roots are not asked.
   */
  remoteUsers: boolean;
  /** Directories uploads may be read from and outputs saved into (before the client's roots narrow them). */
  files: string[];
  /** Where saves go; unset: `generated/` under the first directory in force (src/calls/paid/saving.ts). */
  outputDir?: string;
  /** `maxGems` for submissions that name none. */
  maxGems?: number;
  extractionModel: string;
  defaultWaitSeconds: number;
  /** Spending above this is confirmed by the user first, or sent as the ceiling. */
  confirmAboveGems?: number;
  /** Origins besides the base URL's that serve signed output URLs (the viewer's CSP). */
  mediaOrigins?: string[];
  /**
   * The URL users reach: with oauth the issuer (the resource is `<publicUrl>/mcp`); in either mode
   * its host is accepted in `Host` headers, and the media viewer names the sandbox origin claude.ai
   * serves it from (src/surface/viewer.ts).
   */
  publicUrl?: string;
  /** GENERATION_HTTP_LIMITS: the pools' totals and shares that differ from serve-limits.ts's defaults. */
  serveLimits?: Partial<ServeLimits>;
}

/** The whole configuration: how to serve, and what tools read (EngineConfig). */
export interface Config extends EngineConfig {
  transport: "stdio" | "http";
  host: string;
  port: number;
  sandbox: boolean;
  baseUrl?: string;
  apiKey?: string;
  store: string;
  /** How HTTP clients authenticate: the service key as a Bearer header, or OAuth 2.1. */
  auth: "key" | "oauth";
  /** Further host names `Host` headers may carry (GENERATION_ALLOWED_HOSTS). */
  allowedHosts?: string[];
  /** With oauth: base64 secrets; the first encrypts stored service keys, all decrypt. */
  authSecret?: string[];
  /** With oauth: lifetimes in seconds, and the proxies believed about the client's address (oauth-settings.ts). */
  accessTokenTtl: number;
  refreshTokenTtl: number;
  grantIdleTtl: number;
  refreshGrace: number;
  trustedProxies?: string[];
}
