/** The service's task and asset as tool results carry them (see poll_task and upload_asset). */
export interface Asset {
  id: string;
  kind: string;
  mimeType?: string;
  url: string | null;
  state?: string;
}

export interface Output {
  index: number;
  status: string;
  asset: (Asset & { mimeType: string; url: string }) | null;
}

export interface Task {
  id: string;
  status: string;
  quotedGems: number;
  chargedGems: number;
  releasedGems: number;
  error: { code: string; message: string } | null;
  outputs: Output[];
}

export const TERMINAL = new Set(["succeeded", "partial", "failed", "cancelled"]);

export interface CallResult {
  content?: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export const textOf = (r: CallResult): string =>
  (r.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("\n");
