/**
 * A directory swapped for a link to another directory and back, in a tight loop on its own
 * thread, so a path check and the open after it can be raced for real (not by timed sleeps).
 * A directory someone made under the name meanwhile is moved aside as `<dir>.intruder-N`.
 */
import { Worker } from "node:worker_threads";

const LOOP = `
const { workerData } = require("node:worker_threads");
const fs = require("node:fs");
const { dir, parked, target, flag, until } = workerData;
const stop = new Int32Array(flag);
let swaps = 0;
let intruders = 0;
while (Atomics.load(stop, 0) === 0 && Date.now() < until) {
  fs.renameSync(dir, parked);
  try {
    fs.symlinkSync(target, dir);
  } catch {
    // The name was taken again between the two calls; the next round puts things back.
  }
  // Whatever took the name meanwhile (a directory made by mkdir -p) gives way to the original: it
  // is moved aside, never deleted, so every file written into it can still be counted.
  for (let back = false; !back; ) {
    try {
      const taken = fs.lstatSync(dir, { throwIfNoEntry: false });
      if (taken?.isSymbolicLink()) fs.unlinkSync(dir);
      else if (taken) fs.renameSync(dir, dir + ".intruder-" + intruders++);
      fs.renameSync(parked, dir);
      back = true;
    } catch (err) {
      // The name was taken again in between: try again.
      if (err.code !== "ENOTEMPTY" && err.code !== "EEXIST") throw err;
    }
  }
  swaps++;
}
Atomics.store(stop, 1, swaps);
`;

export interface Swapper {
  /** Stops the loop, leaves `dir` the real directory again, and says how many swaps were made. */
  stop(): Promise<number>;
}

/** Swaps `dir` (a real directory) for a link to `target` and back until stopped or `maxMs` passed. */
export function swapDirectory(dir: string, target: string, maxMs: number): Swapper {
  const flag = new SharedArrayBuffer(8);
  const worker = new Worker(LOOP, {
    eval: true,
    workerData: { dir, parked: `${dir}.parked`, target, flag, until: Date.now() + maxMs },
  });
  const done = new Promise<void>((resolve, reject) => {
    worker.once("exit", () => resolve());
    worker.once("error", reject);
  });
  const words = new Int32Array(flag);
  return {
    async stop() {
      Atomics.store(words, 0, 1);
      await done;
      return Atomics.load(words, 1);
    },
  };
}
