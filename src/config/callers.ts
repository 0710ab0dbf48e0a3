/**
 * Who calls the tools, as far as the configuration tells: someone on this machine (stdio, or HTTP
 * bound to loopback with key auth and no public name) or remote users, strangers to it (`--auth
 * oauth`, HTTP bound beyond loopback, or a front forwarding a public name to it), whose tools
 * touch the server's files only where GENERATION_FILES is set.
 */

/** A bind address only this machine reaches: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

interface Naming {
  publicUrl?: string;
  allowedHosts?: string[];
}

/**
 * The host names requests may carry in `Host` beyond the bind address's: GENERATION_PUBLIC_URL's
 * (in either auth mode: a front with a public name forwards that name) and GENERATION_ALLOWED_HOSTS.
 */
export function publicHostnames(config: Naming): string[] {
  const names = new Set<string>();
  if (config.publicUrl !== undefined) names.add(new URL(config.publicUrl).hostname);
  for (const name of config.allowedHosts ?? []) names.add(name);
  return [...names];
}

/** Whether some accepted name is one that others reach (a front with a public name). */
function servesPublicNames(config: Naming): boolean {
  return publicHostnames(config).some((name) => !isLoopbackHost(name.replace(/^\[(.*)\]$/, "$1")));
}

/** Whether the people calling tools are remote, from the settings read so far. */
export function remoteUsers(config: { transport?: string; auth?: string; host?: string } & Naming): boolean {
  const beyondLoopback = config.host !== undefined && !isLoopbackHost(config.host);
  return (
    config.transport === "http" && (config.auth === "oauth" || beyondLoopback || servesPublicNames(config))
  );
}
