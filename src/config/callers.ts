/**
 * Who calls the tools, as far as the configuration tells: someone on this machine (stdio, or HTTP
 * bound to loopback with key auth) or remote users, strangers to it (`--auth oauth`, or HTTP bound
 * beyond loopback), whose tools touch the server's files only where GENERATION_FILES is set.
 */

/** A bind address only this machine reaches: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Whether the people calling tools are remote, from the settings read so far. */
export function remoteUsers(config: { transport?: string; auth?: string; host?: string }): boolean {
  const beyondLoopback = config.host !== undefined && !isLoopbackHost(config.host);
  return config.transport === "http" && (config.auth === "oauth" || beyondLoopback);
}
