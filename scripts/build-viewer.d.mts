/** Builds the media viewer (src/viewer/app) into one self-contained HTML page. */
export function buildViewerHtml(): Promise<string>;
