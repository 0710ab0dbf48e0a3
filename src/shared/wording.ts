/**
 * Small rules of English for texts built from values: a count and its noun ("1 Gem", "2 Gems"),
 * the article before a word ("an image model"), a task status as a predicate ("has succeeded",
 * not "is succeeded") and a size in the unit people read ("30 MiB"). Pure: the viewer's browser
 * code uses them too (src/viewer/app/render.ts).
 */

/** `1 keyframe`, `3 keyframes`; `many` for irregular plurals. */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Gems as a count: `1 Gem`, `0 Gems`, `2.5 Gems`. */
export const gems = (n: number): string => count(n, "Gem");

/** `a` or `an` for a word or identifier as it is read aloud (by its first letter; digits spelled). */
export function article(word: string): "a" | "an" {
  if (/^(8|11|18|8\d)(\D|$)/.test(word)) return "an";
  if (/^(uni|use|usu|one|eu)/i.test(word)) return "a";
  return /^[aeiou]/i.test(word) ? "an" : "a";
}

/** `an image`, `a video`, `an audio`. */
export const withArticle = (word: string): string => `${article(word)} ${word}`;

/** A task status as what the task did or does: "has succeeded", "is processing", "was cancelled". */
export function statusPredicate(status: string): string {
  switch (status) {
    case "succeeded":
    case "failed":
      return `has ${status}`;
    case "partial":
      return "finished partially (some outputs failed)";
    case "cancelled":
      return "was cancelled";
    default:
      return `is ${status}`;
  }
}

const KIB = 1024;
const MIB = 1024 * KIB;

/**
 * A byte count as read: `30 MiB`, `512 bytes`, `1 byte`; a size that is no whole number of its
 * unit also gives the exact count, so it never reads as equal to a limit it exceeds
 * (`30.0 MiB (31,457,281 bytes)`).
 */
export function byteSize(n: number): string {
  const unit = (size: number, name: string) => {
    const value = n / size;
    if (Number.isInteger(value)) return `${value} ${name}`;
    return `${value.toFixed(1)} ${name} (${n.toLocaleString("en-US")} bytes)`;
  };
  if (n >= MIB) return unit(MIB, "MiB");
  if (n >= KIB) return unit(KIB, "KiB");
  return count(n, "byte");
}
