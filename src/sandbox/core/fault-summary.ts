/**
 * The active faults in words, for `converge sandbox` to print at start: a run that misbehaves on
 * purpose should say so, and say its seed so the same faults can be had again.
 */
import { type EffectiveFaults, type FaultInjector } from './faults.js';

/** One line for all services and one per service with overrides; none when nothing is injected. */
export function describeFaults(injector: FaultInjector, overridden: readonly string[]): string[] {
  const shared = describeSettings(injector.settingsFor(undefined));
  const lines: string[] = [];
  const perService = overridden.map((name) => ({
    name,
    text: describeSettings(injector.settingsFor(name)),
  }));
  if (shared === '' && perService.every((s) => s.text === '')) return [];
  lines.push(`faults: ${shared || 'none'}; seed ${injector.seed}`);
  for (const { name, text } of perService) lines.push(`faults for ${name}: ${text || 'none'}`);
  return lines;
}

function describeSettings(s: EffectiveFaults): string {
  const parts: string[] = [];
  if (s.latencyMs > 0 || s.jitterMs > 0)
    parts.push(`latency ${s.latencyMs} ms${s.jitterMs > 0 ? ` + up to ${s.jitterMs} ms jitter` : ''}`);
  if (s.failFirst > 0) parts.push(`first ${s.failFirst} requests answer 503`);
  if (s.failRate > 0) parts.push(`${percent(s.failRate)} answer 503`);
  if (s.resetRate > 0) parts.push(`${percent(s.resetRate)} connections dropped (half after acting)`);
  if (s.rateLimit)
    parts.push(`rate limit ${s.rateLimit.perSecond}/s per token (burst ${s.rateLimit.burst}), then 429`);
  return parts.join(', ');
}

function percent(rate: number): string {
  return `${Number((rate * 100).toPrecision(4))}%`;
}
