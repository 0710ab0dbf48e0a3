/**
 * The sandbox's fixed, public key (both scopes, a generous cap): in a file of its own so that
 * --sandbox on stdio knows it without loading the sandbox (src/transports/sandbox-start.ts).
 */
export const SANDBOX_API_KEY = `lgk_${"5a4d".repeat(16)}`;
