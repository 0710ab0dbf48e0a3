/**
 * The rule on the server's files as the instructions state it, and whether a caller may save to its
 * disk at all: file-areas.ts applies the rules. Apart from it because the server's instructions
 * need only this, and file-areas.ts (with files.ts) imports node:fs/promises, whose loading (with
 * the file streams and readline it pulls in) would otherwise be part of every start.
 */
import type { Engine } from "../../mcp/context.js";

/** Whether this caller may save outputs to the server's disk at all (where, saveTarget decides). */
export const savesOnDisk = (engine: Engine): boolean =>
  !engine.config.remoteUsers || engine.config.files.length > 0;

/** The rule on files the server's instructions state, for this caller. */
export function filesRule(engine: Engine): string {
  if (!engine.config.remoteUsers) {
    return "save_outputs (or save: true) writes outputs to disk. Files are read from and saved into the allowed directories; a path is absolute, ~/…, or relative to the first of them.";
  }
  return savesOnDisk(engine)
    ? "save_outputs (or save: true) writes outputs to disk. Files are read from and saved into your own folder on this server; a path is relative to it (such as photo.png or generated/…)."
    : "This server keeps no files for you: upload media as base64 data (upload_asset), or let the user choose a file in the media viewer (upload_asset or upload_voice with no path or data), and take results from their signed URLs or the viewer's Download; paths and saves are refused.";
}
