/**
 * The embedded sandbox's memory across restarts: a journal of the requests that changed its
 * state (submissions, uploads, analyses, chats), replayed at start at the sandbox times they were
 * made, so a task, asset or voice made before a restart (`claude --continue` against a new server
 * process) is found again, with the same IDs (they follow from the journal's seed), and a replay
 * under the same Idempotency-Key still dispatches nothing new.
 *
 * Only requests under the public sandbox key are journaled, and no header is kept: the replay
 * adds the key back. One process writes a journal at a time (a lock file naming its pid); a
 * second sandbox on the same directory runs without one and says so.
 */
const { appendFileSync, existsSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } =
  process.getBuiltinModule("node:fs");

/** One request that changed the sandbox, as it arrived. */
export interface JournalEntry {
  /** Sandbox time when it arrived (epoch ms). */
  at: number;
  method: string;
  path: string;
  idempotencyKey?: string;
  contentType?: string;
  /** The body, base64. */
  body: string;
}

export interface OpenedJournal {
  seed: string;
  entries: JournalEntry[];
  append(entry: JournalEntry): void;
  close(): void;
}

/** Why a journal is not kept: another live process holds it. */
export class JournalBusy extends Error {
  override readonly name = "JournalBusy";
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Takes the journal's lock: a lock left by a process that is gone is taken over. */
function lock(path: string): void {
  const lockPath = `${path}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, "wx");
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = Number(readFileSync(lockPath, "utf8"));
      if (Number.isInteger(holder) && holder > 0 && alive(holder)) {
        throw new JournalBusy(`another sandbox (pid ${holder}) keeps the journal beside this ledger`);
      }
      rmSync(lockPath, { force: true });
    }
  }
  throw new JournalBusy("the sandbox journal's lock could not be taken");
}

/** Opens (or starts) the journal at `path`, with `seed` for a new one. */
export function openJournal(path: string, seed: string): OpenedJournal {
  lock(path);
  let kept = seed;
  const entries: JournalEntry[] = [];
  if (existsSync(path)) {
    const lines = readFileSync(path, "utf8").split("\n");
    for (const [i, line] of lines.entries()) {
      if (line.trim() === "") continue;
      try {
        const parsed = JSON.parse(line) as { seed?: string } & Partial<JournalEntry>;
        if (i === 0 && typeof parsed.seed === "string") kept = parsed.seed;
        else if (typeof parsed.at === "number" && typeof parsed.path === "string")
          entries.push(parsed as JournalEntry);
      } catch {
        // A line cut by a crash mid-write: what came before it stands.
      }
    }
  }
  if (entries.length === 0 && kept === seed)
    writeFileSync(path, `${JSON.stringify({ seed })}\n`, { mode: 0o600 });
  return {
    seed: kept,
    entries,
    append: (entry) => appendFileSync(path, `${JSON.stringify(entry)}\n`),
    close: () => rmSync(`${path}.lock`, { force: true }),
  };
}
