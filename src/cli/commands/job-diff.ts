/**
 * The scheduler's structured job diff (the shape its plan and `versions?diffs=true` return) as text,
 * after the real scheduler's CLI: one line per changed field, `+` added, `-` deleted, `~` edited
 * (`Name: "old" => "new"`), objects as `Name {` … `}`, groups and tasks indented under the job.
 * A pure function of the diff, so `converge job plan`, `converge job history --diffs` and the Job
 * kind's notes can share one reading of it.
 */
import { createColors } from 'picocolors';
import { sensitiveEnvFrom } from '../../common/allow-list.js';
import { copiedSecrets, maskText, type SecretCopies } from '../../planner/masking.js';
import { SENSITIVE, SENSITIVE_CHANGED } from '../../planner/render/format.js';
import type {
  DiffType,
  FieldDiff,
  JobDiff,
  ObjectDiff,
  TaskDiff,
  TaskGroupDiff,
} from '../../clients/scheduler/client.js';

export interface JobDiffRenderOptions {
  color?: boolean;
  /** Also list fields and objects the diff marks `None` (unchanged); hidden by default, as they are noise. */
  verbose?: boolean;
  /** Spaces per nesting level. Default 2. */
  indent?: number;
  /**
   * Whether a field's own name says secret (`Env[DB_PASSWORD]`, a driver's `auth[0][password]`):
   * its values are shown as `(sensitive value)`, as the plan shows them. The service marks none of
   * them, and a job plan's output goes into CI logs. Default: `CONVERGE_SENSITIVE_ENV`'s default rule.
   */
  secretName?: (name: string) => boolean;
  /**
   * Secrets known elsewhere (the jobs of the same answer): their copies in other fields are masked,
   * beside those of the diff's own secret fields.
   */
  secrets?: readonly string[];
}

const defaultSecretName = sensitiveEnvFrom(undefined).allows;

/**
 * The values of the diff's fields whose names say secret, old and new: a copy of one in another field
 * (`Env[DSN]` holding the password, a task's `args`) is masked too, as the plan masks copies.
 */
export function secretDiffValues(
  diff: JobDiff | null | undefined,
  secretName: (name: string) => boolean = defaultSecretName,
): string[] {
  const out: string[] = [];
  const fields = (list: FieldDiff[] | null | undefined) => {
    for (const f of list ?? [])
      if (secretName(entryName(f.Name)))
        for (const v of [f.Old, f.New]) if (typeof v === 'string' && v !== '' && v !== SENSITIVE) out.push(v);
  };
  const objects = (list: ObjectDiff[] | null | undefined) => {
    for (const o of list ?? []) {
      fields(o.Fields);
      objects(o.Objects);
    }
  };
  if (!diff) return out;
  fields(diff.Fields);
  objects(diff.Objects);
  for (const g of diff.TaskGroups ?? []) {
    fields(g.Fields);
    objects(g.Objects);
    for (const t of g.Tasks ?? []) {
      fields(t.Fields);
      objects(t.Objects);
    }
  }
  return out;
}

/** The copies to mask: the diff's own secrets and those given (`JobDiffRenderOptions.secrets`). */
function copiesIn(
  diff: JobDiff | null | undefined,
  secretName: (name: string) => boolean,
  given: readonly string[] = [],
): SecretCopies | undefined {
  return copiedSecrets([], () => undefined, [...secretDiffValues(diff, secretName), ...given]);
}

/** A field's values with copies of the secrets masked. */
function withoutCopies(f: FieldDiff, copies: SecretCopies | undefined): FieldDiff {
  if (!copies) return f;
  return {
    ...f,
    ...(typeof f.Old === 'string' ? { Old: maskText(f.Old, copies) } : {}),
    ...(typeof f.New === 'string' ? { New: maskText(f.New, copies) } : {}),
  };
}

/** The name a field's value is known by: the last key of `Env[X]` or `auth[0][password]`, else the name. */
function entryName(field: string): string {
  const keys = [...field.matchAll(/\[([^\]]*)\]/g)].map((m) => m[1]!).filter((k) => !/^\d+$/.test(k));
  return keys.at(-1) ?? field;
}

const SIGN: Record<DiffType, string> = { Added: '+', Deleted: '-', Edited: '~', None: ' ' };

/** Whether the diff changes anything: the service marks the whole job `None` when nothing in it changed. */
export function jobDiffHasChanges(diff: JobDiff | null | undefined): boolean {
  if (!diff) return false;
  return diff.Type !== 'None';
}

/** The diff as lines of text (no trailing newline); an empty string when nothing changed. */
export function renderJobDiff(diff: JobDiff | null | undefined, options: JobDiffRenderOptions = {}): string {
  if (!diff || (diff.Type === 'None' && !options.verbose)) return '';
  const c = createColors(options.color ?? false);
  const paint: Record<DiffType, (s: string) => string> = {
    Added: c.green,
    Deleted: c.red,
    Edited: c.yellow,
    None: (s) => s,
  };
  const step = ' '.repeat(options.indent ?? 2);
  const verbose = options.verbose ?? false;
  const secretName = options.secretName ?? defaultSecretName;
  const copies = copiesIn(diff, secretName, options.secrets);
  const out: string[] = [];
  const shown = (t: DiffType) => verbose || t !== 'None';
  const head = (type: DiffType, text: string, depth: number) =>
    out.push(`${step.repeat(depth)}${paint[type](`${SIGN[type]} ${text}`)}`);

  const fields = (list: FieldDiff[] | null | undefined, depth: number) => {
    const visible = (list ?? []).filter((f) => shown(f.Type));
    // Aligned names within one block read like a table; Nomad does the same.
    const width = Math.max(0, ...visible.map((f) => f.Name.length));
    for (const f of visible) {
      const name = `${f.Name}:`.padEnd(width + 1);
      const value = secretName(entryName(f.Name)) ? maskedValue(f) : fieldValue(withoutCopies(f, copies));
      head(f.Type, `${name} ${value}${annotations(f.Annotations)}`, depth);
    }
  };
  const objects = (list: ObjectDiff[] | null | undefined, depth: number) => {
    for (const o of (list ?? []).filter((x) => shown(x.Type))) {
      head(o.Type, `${o.Name} {`, depth);
      fields(o.Fields, depth + 1);
      objects(o.Objects, depth + 1);
      out.push(`${step.repeat(depth)}${paint[o.Type]('  }')}`);
    }
  };
  const task = (t: TaskDiff, depth: number) => {
    head(t.Type, `Task: ${quote(t.Name)}${annotations(t.Annotations)}`, depth);
    fields(t.Fields, depth + 1);
    objects(t.Objects, depth + 1);
  };
  const group = (g: TaskGroupDiff, depth: number) => {
    head(g.Type, `Task Group: ${quote(g.Name)}${updatesNote(g.Updates)}`, depth);
    fields(g.Fields, depth + 1);
    objects(g.Objects, depth + 1);
    for (const t of (g.Tasks ?? []).filter((x) => shown(x.Type))) task(t, depth + 1);
  };

  head(diff.Type, `Job: ${quote(diff.ID)}`, 0);
  fields(diff.Fields, 1);
  objects(diff.Objects, 1);
  // Groups with no change of their own still list planned updates (an `ignore` count, say) in verbose.
  for (const g of diff.TaskGroups ?? []) if (shown(g.Type)) group(g, 1);
  return out.join('\n');
}

/**
 * The diff with the values of fields whose names say secret replaced by the marker, for the JSON a
 * job plan or history prints: what the text shows masked is masked there too.
 */
export function maskJobDiff<T extends JobDiff | null | undefined>(
  diff: T,
  secretName: (name: string) => boolean = defaultSecretName,
  secrets: readonly string[] = [],
): T {
  if (!diff) return diff;
  const copies = copiesIn(diff, secretName, secrets);
  const field = (f: FieldDiff): FieldDiff =>
    secretName(entryName(f.Name))
      ? {
          ...f,
          ...(f.Old !== undefined && f.Old !== '' ? { Old: SENSITIVE } : {}),
          ...(f.New !== undefined && f.New !== '' ? { New: SENSITIVE } : {}),
        }
      : withoutCopies(f, copies);
  const object = (o: ObjectDiff): ObjectDiff => ({
    ...o,
    ...(o.Fields ? { Fields: o.Fields.map(field) } : {}),
    ...(o.Objects ? { Objects: o.Objects.map(object) } : {}),
  });
  const parts = <P extends { Fields?: FieldDiff[] | null; Objects?: ObjectDiff[] | null }>(p: P): P => ({
    ...p,
    ...(p.Fields ? { Fields: p.Fields.map(field) } : {}),
    ...(p.Objects ? { Objects: p.Objects.map(object) } : {}),
  });
  return {
    ...parts(diff),
    ...(diff.TaskGroups
      ? {
          TaskGroups: diff.TaskGroups.map((g) => ({
            ...parts(g),
            ...(g.Tasks ? { Tasks: g.Tasks.map(parts) } : {}),
          })),
        }
      : {}),
  } as T;
}

/** As the manifest's plan says a secret's change: `(sensitive value changed)`, not a masked pair. */
function maskedValue(f: FieldDiff): string {
  return f.Type === 'Edited' ? SENSITIVE_CHANGED : SENSITIVE;
}

function fieldValue(f: FieldDiff): string {
  switch (f.Type) {
    case 'Added':
      return quote(f.New);
    case 'Deleted':
      return quote(f.Old);
    case 'Edited':
      return `${quote(f.Old)} => ${quote(f.New)}`;
    default:
      return quote(f.New ?? f.Old);
  }
}

function quote(s: string | undefined | null): string {
  return JSON.stringify(s ?? '');
}

function annotations(list: string[] | null | undefined): string {
  return list && list.length > 0 ? ` (${list.join(', ')})` : '';
}

/** The order the real scheduler prints planned updates in, then any it adds later, by name. */
const UPDATE_ORDER = [
  'create',
  'destroy',
  'migrate',
  'in-place update',
  'create/destroy update',
  'canary',
  'ignore',
];

function updatesNote(updates: Record<string, number> | null | undefined): string {
  const entries = Object.entries(updates ?? {}).filter(([, n]) => n > 0);
  if (entries.length === 0) return '';
  const rank = (k: string) => {
    const i = UPDATE_ORDER.indexOf(k);
    return i < 0 ? UPDATE_ORDER.length : i;
  };
  entries.sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b));
  return ` (${entries.map(([k, n]) => `${n} ${k}`).join(', ')})`;
}
