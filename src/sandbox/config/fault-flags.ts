/**
 * `converge sandbox`'s fault options as a `FaultsConfig`: `--latency MS[:JITTER]`, `--fail-rate R`,
 * `--reset-rate R`, `--rate-limit RPS` (each repeatable, a bare value for all services or
 * `service=value` for one) and `--seed N`. A bad value is one message naming the option and the
 * value; service names are checked against the services this sandbox runs.
 */
import {
  type FaultsConfig,
  overfullFaultShares,
  overfullSharesMessage,
  type ServiceFaultsConfig,
} from '../core/faults.js';
import { FAULT_RANGES } from './schema.js';

export interface FaultFlags {
  latency?: readonly string[];
  failRate?: readonly string[];
  resetRate?: readonly string[];
  rateLimit?: readonly string[];
  seed?: string;
}

export class FaultFlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FaultFlagError';
  }
}

type Setter = (target: ServiceFaultsConfig, value: string, flag: string) => void;

const SETTERS: { key: keyof Omit<FaultFlags, 'seed'>; flag: string; set: Setter }[] = [
  { key: 'latency', flag: '--latency', set: setLatency },
  {
    key: 'failRate',
    flag: '--fail-rate',
    set: (t, v, f) => {
      t.failRate = rate(v, f);
    },
  },
  {
    key: 'resetRate',
    flag: '--reset-rate',
    set: (t, v, f) => {
      t.resetRate = rate(v, f);
    },
  },
  {
    key: 'rateLimit',
    flag: '--rate-limit',
    set: (t, v, f) => {
      t.rateLimit = requestsPerSecond(v, f);
    },
  },
];

/** The faults the options ask for; undefined when none was given. Throws FaultFlagError. */
export function faultsFromFlags(
  flags: FaultFlags,
  serviceNames: readonly string[],
): FaultsConfig | undefined {
  const faults: FaultsConfig = {};
  let given = false;
  for (const { key, flag, set } of SETTERS) {
    // Given twice for one place, the last silently won: the first is named instead.
    const seen = new Map<string, string>();
    for (const raw of flags[key] ?? []) {
      given = true;
      const { service, value } = splitService(raw, flag, serviceNames);
      const where = service ?? '';
      const earlier = seen.get(where);
      if (earlier !== undefined)
        throw new FaultFlagError(
          `${flag} is given twice for ${service === undefined ? 'every service' : show(service)} (${show(earlier)} and ${show(raw)}): give it once`,
        );
      seen.set(where, raw);
      if (service === undefined) set(faults, value, flag);
      else set(((faults.services ??= {})[service] ??= {}), value, flag);
    }
  }
  if (flags.seed !== undefined) {
    given = true;
    faults.seed = seed(flags.seed);
  }
  const overfull = overfullFaultShares(faults)[0];
  if (overfull) {
    throw new FaultFlagError(
      overfullSharesMessage(overfull, { failRate: '--fail-rate', resetRate: '--reset-rate' }),
    );
  }
  return given ? faults : undefined;
}

/** `scheduler=0.2` → the service and its value; `0.2` → a value for all services. */
function splitService(
  raw: string,
  flag: string,
  serviceNames: readonly string[],
): { service?: string; value: string } {
  const eq = raw.indexOf('=');
  if (eq === -1) return { value: raw };
  const service = raw.slice(0, eq);
  if (!serviceNames.includes(service)) {
    throw new FaultFlagError(
      `${flag}: ${show(service)} is not a service of the sandbox (${serviceNames.join(', ')})`,
    );
  }
  return { service, value: raw.slice(eq + 1) };
}

/** A decimal number as written (no hex, no exponent, no empty string that Number() reads as 0). */
function decimal(text: string): number | undefined {
  return /^\d+(\.\d+)?$|^\.\d+$/.test(text) ? Number(text) : undefined;
}

/** Whether `n` lies in the range the config schema states for the setting. */
function inRange(n: number, range: { minimum?: number; maximum?: number }): boolean {
  return (
    (range.minimum === undefined || n >= range.minimum) && (range.maximum === undefined || n <= range.maximum)
  );
}

function rate(text: string, flag: string): number {
  const n = decimal(text);
  const { minimum, maximum } = FAULT_RANGES.rate;
  if (n === undefined || !inRange(n, FAULT_RANGES.rate))
    throw new FaultFlagError(
      `${flag}: ${show(text)} is not a rate between ${minimum} and ${maximum} written as a decimal (such as 0.1)`,
    );
  return n;
}

function requestsPerSecond(text: string, flag: string): number {
  const n = decimal(text);
  if (n === undefined || !inRange(n, FAULT_RANGES.perSecond))
    throw new FaultFlagError(`${flag}: ${show(text)} is not a number of requests per second (0: no limit)`);
  return n;
}

function setLatency(target: ServiceFaultsConfig, text: string, flag: string): void {
  const m = /^(\d+)(?::(\d+))?$/.exec(text);
  const latency = m ? Number(m[1]) : NaN;
  const jitter = m?.[2] !== undefined ? Number(m[2]) : 0;
  if (!m || !Number.isSafeInteger(latency) || !Number.isSafeInteger(jitter)) {
    throw new FaultFlagError(
      `${flag}: ${show(text)} is not MS or MS:JITTER (whole milliseconds, e.g. 10 or 10:5)`,
    );
  }
  if (!inRange(latency, FAULT_RANGES.latencyMs) || !inRange(jitter, FAULT_RANGES.latencyMs))
    throw new FaultFlagError(`${flag}: ${show(text)} is more than ${FAULT_RANGES.latencyMs.maximum} ms`);
  target.latencyMs = latency;
  target.jitterMs = jitter;
}

function seed(text: string): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  const { minimum, maximum } = FAULT_RANGES.seed;
  if (Number.isNaN(n) || !inRange(n, FAULT_RANGES.seed))
    throw new FaultFlagError(`--seed: ${show(text)} is not a whole number from ${minimum} to ${maximum}`);
  return n;
}

/**
 * The value as typed, for a message: cut when long and anything but printable ASCII escaped (it came
 * from argv, which may hold terminal escapes), in quotes when it is empty or needed escaping.
 */
function show(text: string): string {
  const cut = text.length > 40 ? `${text.slice(0, 40)}...` : text;
  const escaped = cut.replace(/[^\x21-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return escaped === text && text !== '' ? text : `"${escaped}"`;
}
