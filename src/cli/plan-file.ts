/**
 * Saved plans (`plan -out FILE`, `apply FILE`). The file records the plan as rendered (secrets
 * masked), the manifest paths and each object's observed version — never a secret. `apply FILE`
 * loads the manifest again, refuses when it no longer yields the saved plan, and refuses each object
 * whose live state moved since the plan (per-object staleness, not a whole-state serial).
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Change, Plan } from '../planner/types.js';
import { canonicalJson } from '../resources/compare.js';
import { CliError } from './exit-codes.js';

const FORMAT = 'converge-plan';
const FORMAT_VERSION = 1;

type SavedChange = Omit<Change, 'desired' | 'observed'>;

export interface SavedPlan {
  format: typeof FORMAT;
  format_version: number;
  converge_version: string;
  created_at: string;
  /** Manifest paths as given, relative to `cwd` when they were relative. */
  manifest: string[];
  prune: boolean;
  changes: SavedChange[];
}

function strip(change: Change): SavedChange {
  const { desired: _d, observed: _o, ...rest } = change;
  return rest;
}

export async function writePlanFile(
  file: string,
  plan: Plan,
  meta: { manifest: string[]; prune: boolean; version: string },
): Promise<void> {
  const saved: SavedPlan = {
    format: FORMAT,
    format_version: FORMAT_VERSION,
    converge_version: meta.version,
    created_at: new Date().toISOString(),
    manifest: meta.manifest,
    prune: meta.prune,
    changes: plan.changes.map(strip),
  };
  // Written beside the target and renamed, so a crash never leaves half a plan.
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(4).toString('hex')}.tmp`);
  await writeFile(tmp, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
}

export async function readPlanFile(file: string): Promise<SavedPlan> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(
      `cannot read plan file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  let saved: SavedPlan;
  try {
    saved = JSON.parse(text) as SavedPlan;
  } catch {
    throw new CliError(`${file} is not a Converge plan file (not JSON)`);
  }
  if (saved?.format !== FORMAT || !Array.isArray(saved.changes) || !Array.isArray(saved.manifest)) {
    throw new CliError(`${file} is not a Converge plan file`);
  }
  if (saved.format_version !== FORMAT_VERSION) {
    throw new CliError(
      `${file} has plan format ${saved.format_version}; this Converge reads format ${FORMAT_VERSION}`,
    );
  }
  return saved;
}

/**
 * Pairs a saved plan with a fresh plan of the same manifest: the saved changes, carrying the fresh
 * plan's desired objects. Refuses when the manifest no longer produces what was saved.
 */
export function reconcileSavedPlan(saved: SavedPlan, fresh: Plan, file: string): Plan {
  const freshByAddress = new Map(fresh.changes.map((c) => [c.address, c]));
  const mismatched: string[] = [];
  const changes = saved.changes.map((s): Change => {
    const f = freshByAddress.get(s.address);
    if (s.action !== 'delete' && (!f?.desired || canonicalJson(f.after) !== canonicalJson(s.after))) {
      mismatched.push(s.address);
    }
    return { ...s, ...(f?.desired ? { desired: f.desired } : {}) };
  });
  const savedAddresses = new Set(saved.changes.map((c) => c.address));
  for (const f of fresh.changes)
    if (!savedAddresses.has(f.address) && f.action !== 'delete') mismatched.push(f.address);
  if (mismatched.length > 0) {
    throw new CliError(
      `the manifest changed since ${file} was saved (${mismatched.join(', ')}); run \`converge plan -out ${file}\` again`,
    );
  }
  return { ...fresh, changes, summary: fresh.summary };
}
