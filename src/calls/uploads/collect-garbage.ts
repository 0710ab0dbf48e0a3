/**
 * A full garbage collection, asked for where a burst of large, short-lived strings would otherwise
 * pile up. Each chunk of a media viewer upload arrives as a 683 KiB base64 string (and the JSON text
 * around it): V8 keeps strings that size in its large-object space, which only a full collection
 * empties, and its own pacing let 40 to 60 MiB of them gather before one ran (measured with
 * --trace-gc on a 30 MiB upload). Node offers no way to ask for a collection without the
 * `--expose-gc` flag, which hosts do not pass; it is set here once, for this one function, and the
 * collection runs as its own task (`execution: "async"`), never in the middle of a request.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

type Gc = (o: { type: "major"; execution: "async" }) => Promise<void>;
let gc: Gc | undefined | null;

/** Asks V8 for a full collection soon; does nothing where the runtime does not allow it. */
export function collectGarbage(): void {
  if (gc === undefined) {
    try {
      setFlagsFromString("--expose-gc");
      gc = runInNewContext("gc") as Gc;
    } catch {
      gc = null;
    }
  }
  void gc?.({ type: "major", execution: "async" }).catch(() => {});
}
