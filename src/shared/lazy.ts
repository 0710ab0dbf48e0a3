/**
 * The one way code here defers a load: a module (or any one-time async setup) imported on first
 * use instead of at start, made once and shared by every caller. What a host needs before its first
 * `tools/list` is held by test/e2e/start-path.test.ts; everything else is loaded through this.
 * A load that failed is tried again on the next call rather than failing for the process's life.
 */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
    return loading;
  };
}
