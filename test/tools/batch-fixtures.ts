/** What the generate_batch tests share: the answer's shape and an image item. */
export type BatchItem = {
  index: number;
  identity: string;
  maxGems?: number;
  created?: boolean;
  task?: { id: string; status: string; chargedGems: number; quotedGems: number };
  error?: { code: string; message: string };
};

export type Batch = {
  idempotencyKey: string;
  items: BatchItem[];
  gems: { estimated?: number; ceiling?: number; quoted: number; charged: number };
  next: string;
};

/** One generate_image item of a batch. */
export const imageItem = (prompt: string, parameters: Record<string, unknown> = {}) => ({
  tool: "generate_image",
  arguments: { model: "sandbox-image-fast", prompt, parameters },
});
