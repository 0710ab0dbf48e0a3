/** What the test host page (host.ts) saw the view do, for the tests (browser.ts) to read. */
export interface HostLog {
  downloads: unknown[];
  resultSentAt: number;
  sizes: unknown[];
  /** ui/update-model-context requests (the last one is what the model would get). */
  context: unknown[];
  /** ui/message requests. */
  messages: unknown[];
  /** ui/open-link requests. */
  opened: string[];
}
