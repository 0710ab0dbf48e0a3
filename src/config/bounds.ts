/**
 * Bounds of this server's own tool arguments (the service's are in src/config/service-limits.ts). A
 * module with no imports, so the configuration can check its settings against them at start
 * without loading the tools' schemas.
 */

/** The longest `wait` a generation tool or poll_task accepts, in seconds. */
export const MAX_WAIT_SECONDS = 600;
