/**
 * Whole numbers from the command line. `Number()` reads `""` and `" "` as 0 and takes `0x10`, `1e1`
 * and `1.0`: `--max-deletes ""` (an unset shell variable) was a guard of 0, `--port ""` a random
 * port. A flag's whole number is decimal digits and nothing else.
 */

/** `text` as a whole number when it is decimal digits only (and a safe integer); else undefined. */
export function wholeNumber(text: string): number | undefined {
  if (!/^\d+$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}
