/**
 * Durations written back the way a manifest holds them: Go's units, zero parts left out, and every
 * text parsing back to the value it came from.
 */
import { describe, expect, it } from 'vitest';
import { formatNanoseconds, formatSeconds, parseGoDuration } from '../../src/common/go-duration.js';

describe('formatNanoseconds', () => {
  it('writes whole hours, minutes and seconds without their zero parts', () => {
    expect(formatNanoseconds(60e9)).toBe('1m');
    expect(formatNanoseconds(86_400e9)).toBe('24h');
    expect(formatNanoseconds(5_400e9)).toBe('1h30m');
    expect(formatNanoseconds(3_661e9)).toBe('1h1m1s');
    expect(formatNanoseconds(0)).toBe('0s');
    expect(formatSeconds(3600)).toBe('1h');
  });

  it('writes fractions as Go does: decimals of seconds, or ms, µs, ns under a second', () => {
    expect(formatNanoseconds(1.5e9)).toBe('1.5s');
    expect(formatNanoseconds(250e6)).toBe('250ms');
    expect(formatNanoseconds(1_500)).toBe('1.5µs');
    expect(formatNanoseconds(12)).toBe('12ns');
    expect(formatNanoseconds(-30e9)).toBe('-30s');
  });

  it('gives text that parses back to the same duration', () => {
    for (const ns of [1, 999, 1_000_001, 1.5e9, 61e9, 90_061_001e6, 86_400e9])
      expect(parseGoDuration(formatNanoseconds(ns))! * 1e6).toBeCloseTo(ns, 0);
  });
});
