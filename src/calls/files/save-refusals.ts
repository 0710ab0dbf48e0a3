/**
 * The refusals of saving outputs to disk, each code once: a save this caller may not make here
 * (SAVE_NOT_ALLOWED: saving.ts and file-areas.ts, before any charge), and outputs that are paid
 * for but could not be written (SAVE_FAILED: save_outputs).
 */
import { LocalRefusal } from "../../shared/local-refusals.js";

/** No save: `message` says why, `action` the remedy that works first. */
export class SaveNotAllowedError extends LocalRefusal {
  override readonly name = "SaveNotAllowedError";
  constructor(message: string, action: string) {
    super("SAVE_NOT_ALLOWED", message, action);
  }
}

/** `what` of a task (such as "2 outputs of task t1") could not be written; the reasons follow it. */
export class SaveFailedError extends LocalRefusal {
  override readonly name = "SaveFailedError";
  constructor(what: string) {
    super(
      "SAVE_FAILED",
      `${what} could not be written to disk (the reasons follow)`,
      "Fix what the reasons name and call save_outputs again (it charges nothing), or use the signed URLs below.",
    );
  }
}
