/**
 * Go's `time.ParseDuration`, which the real services use for durations (`?wait=`, `30s`, `5m`):
 * a sign, then one or more `<number><unit>` pairs (`1h30m`, `1.5s`, `100ms`), units ns, us, µs, ms,
 * s, m, h. A bare `0` is valid; any other number needs a unit.
 */

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5 micro sign
  μs: 1e-3, // U+03BC Greek mu
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PAIR = /^(\d*)(?:\.(\d*))?([^\d.]+)/;

/** Milliseconds (may be fractional or negative), or undefined when the text is not a Go duration. */
export function parseGoDuration(text: string): number | undefined {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let total = 0;
  while (rest !== '') {
    const m = PAIR.exec(rest);
    if (!m) return undefined;
    const [whole, intPart = '', fracPart, unit = ''] = m;
    if (intPart === '' && (fracPart === undefined || fracPart === '')) return undefined;
    const perUnit = UNIT_MS[unit];
    if (perUnit === undefined) return undefined;
    total += Number(`${intPart || '0'}.${fracPart || '0'}`) * perUnit;
    rest = rest.slice(whole.length);
  }
  return sign * total;
}
