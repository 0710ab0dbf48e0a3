/**
 * `server/discover` names every protocol revision this server serves. SDK 2.4 answers it with the
 * modern revisions only (`Server._ondiscover`: "2025-era versions are negotiated via
 * initialize"), but the same HTTP endpoint, and stdio, also serve 2025-11-25 and older through
 * `initialize`; a dual-era server lists both, as the spec's own example does
 * (modelcontextprotocol.io/specification/2026-07-28/basic/versioning: `"supported": ["2026-07-28",
 * "2025-11-25"]`). The SDK offers no option for it, so the instance's answer is widened here.
 */
import {
  type DiscoverResult,
  type McpServer,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/server";

export function discoverEveryRevision(server: McpServer): void {
  const inner = server.server as unknown as { _ondiscover?: () => DiscoverResult };
  const modern = inner._ondiscover?.bind(server.server);
  // A later SDK without this method answers discover its own way: leave it.
  if (modern === undefined) return;
  inner._ondiscover = () => {
    const result = modern();
    const versions = [...result.supportedVersions, ...SUPPORTED_PROTOCOL_VERSIONS];
    return { ...result, supportedVersions: [...new Set(versions)] };
  };
}
