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

const NS_PER: [unit: string, ns: number][] = [
  ['h', 3_600e9],
  ['m', 60e9],
];

/** `1.5` from 1500 at 1000 per unit: the quotient, with the remainder as decimals, trailing zeros cut. */
function decimal(ns: number, perUnit: number): string {
  const whole = Math.floor(ns / perUnit);
  const rest = ns - whole * perUnit;
  if (rest === 0) return String(whole);
  const digits = String(perUnit).length - 1;
  return `${whole}.${String(rest).padStart(digits, '0').replace(/0+$/, '')}`;
}

/**
 * A whole number of nanoseconds as a Go duration a manifest would hold: `1h`, `24h`, `1h30m`, `90ms`.
 * Go's own `Duration.String` writes `1h0m0s`; the zero parts are left out here so a value reads the
 * way it was written (both forms parse to the same duration). Under a second: ms, µs or ns, as Go.
 */
export function formatNanoseconds(nanoseconds: number): string {
  if (!Number.isFinite(nanoseconds)) return String(nanoseconds);
  if (nanoseconds === 0) return '0s';
  const sign = nanoseconds < 0 ? '-' : '';
  let rest = Math.round(Math.abs(nanoseconds));
  if (rest < 1e3) return `${sign}${rest}ns`;
  if (rest < 1e6) return `${sign}${decimal(rest, 1e3)}µs`;
  if (rest < 1e9) return `${sign}${decimal(rest, 1e6)}ms`;
  let out = '';
  for (const [unit, per] of NS_PER) {
    const n = Math.floor(rest / per);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * per;
  }
  if (rest > 0) out += `${decimal(rest, 1e9)}s`;
  return `${sign}${out}`;
}

/** Whole seconds as a Go duration (`3600` → `1h`), for services that count durations in seconds. */
export function formatSeconds(seconds: number): string {
  return formatNanoseconds(seconds * 1e9);
}
