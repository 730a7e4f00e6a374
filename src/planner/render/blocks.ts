/**
 * Values and attribute diffs as indented blocks, after terraform's nested blocks: a short value stays
 * on one line, a longer object or list opens a block with one attribute a line, and a list of named
 * objects (task groups, tasks, policies) shows one block per item, headed by its name. A change is
 * marked at the depth where it happens: `~ TaskGroups["web"] {` then `~ Count = 2 -> 3` inside.
 */
import type { AttributeDiff } from '../../resources/contract.js';
import { childPath, pathParts } from '../../resources/diff-path.js';
import { formatKey, formatValue, SENSITIVE_CHANGED } from './format.js';
import type { DiffLine } from './lines.js';
import { heredocBody, heredocDiff, isMultiline } from './text-diff.js';

type Sign = DiffLine['sign'];

/** Longer values than this (as one line) open a block. */
const INLINE_WIDTH = 60;

/** The fields the services name list items by (task groups and tasks, policies, service identities). */
const NAME_FIELDS = ['Name', 'ServiceName', 'NodeName'] as const;

type Obj = Record<string, unknown>;

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nameOf(item: unknown): string | undefined {
  if (!isObject(item)) return undefined;
  for (const field of NAME_FIELDS) if (typeof item[field] === 'string') return item[field];
  return undefined;
}

/** A list whose items all carry a distinct name: items are matched and headed by it. */
function isNamedList(value: unknown): value is Obj[] {
  if (!Array.isArray(value) || value.length === 0) return false;
  const names = value.map(nameOf);
  return names.every((n) => n !== undefined) && new Set(names).size === names.length;
}

/**
 * Whether a value stays on one line: a scalar, or a short object or list. A named list is blocks unless
 * its items hold nothing but their names (a role's policies), so task groups always read alike.
 */
function isShort(value: unknown): boolean {
  if (isMultiline(value)) return false;
  if (typeof value !== 'object' || value === null) return true;
  if (isNamedList(value) && value.some((item) => Object.keys(item).length > 1)) return false;
  // A multi-line string inside (a template's data) reads as a heredoc in a block, not as `\n`s.
  if (JSON.stringify(value).includes('\\n')) return false;
  return formatValue(value).length <= INLINE_WIDTH;
}

/** A list item's label under its list's: `TaskGroups["web"]`, or `Args[0]` for an unnamed one. */
function itemLabel(list: string, key: string): string {
  return /^\d+$/.test(key) ? `${list}[${key}]` : `${list}[${JSON.stringify(key)}]`;
}

/** Pads the `=` of a block's attributes into one column, as `terraform plan` does. */
function padder(labels: readonly string[]): (label: string) => string {
  const width = Math.max(0, ...labels.map((l) => l.length));
  return (label) => label.padEnd(width);
}

/** Whether `label = value` is written with an `=` (a named list is written as blocks instead). */
function takesEquals(value: unknown): boolean {
  return isShort(value) || !isNamedList(value);
}

/** The lines of the attributes of an object, each marked `sign`, one level below `depth`. */
export function objectLines(obj: Obj, sign: Sign, depth: number): DiffLine[] {
  // Each key as HCL writes it: a dotted one (`"spring.datasource.url"`) quoted, never read as nesting.
  const entries = Object.keys(obj).map((k) => [formatKey(k), obj[k]] as const);
  const pad = padder(entries.filter(([, v]) => takesEquals(v)).map(([label]) => label));
  return entries.flatMap(([label, v]) => valueLines(label, v, sign, depth, pad));
}

/**
 * `label = value` marked `sign` (an added, removed or kept value), over as many lines as the value
 * needs: a heredoc for a multi-line string, a block for a long object or list.
 */
export function valueLines(
  label: string,
  value: unknown,
  sign: Sign,
  depth: number,
  pad: (label: string) => string = (l) => l,
): DiffLine[] {
  if (isMultiline(value))
    return [{ sign, depth, text: `${pad(label)} = <<-EOT` }, ...heredocBody(value, depth)];
  if (isShort(value)) return [{ sign, depth, text: `${pad(label)} = ${formatValue(value)}` }];
  if (isNamedList(value))
    return value.flatMap((item) => [
      { sign, depth, text: `${itemLabel(label, nameOf(item)!)} {` },
      ...objectLines(item, sign, depth + 1),
      { sign: ' ' as const, depth, text: '}' },
    ]);
  if (Array.isArray(value))
    return [
      { sign, depth, text: `${pad(label)} = [` },
      ...value.flatMap((item) => itemLines(item, sign, depth + 1)),
      { sign: ' ', depth, text: ']' },
    ];
  return [
    { sign, depth, text: `${pad(label)} = {` },
    ...objectLines(value as Obj, sign, depth + 1),
    { sign: ' ', depth, text: '}' },
  ];
}

/** An item of an unnamed list: on one line when short, else its own block, each followed by a comma. */
function itemLines(item: unknown, sign: Sign, depth: number): DiffLine[] {
  if (isShort(item)) return [{ sign, depth, text: `${formatValue(item)},` }];
  if (isMultiline(item)) return [{ sign, depth, text: '<<-EOT' }, ...heredocBody(item, depth)];
  if (Array.isArray(item))
    return [
      { sign, depth, text: '[' },
      ...item.flatMap((x) => itemLines(x, sign, depth + 1)),
      { sign: ' ', depth, text: '],' },
    ];
  return [
    { sign, depth, text: '{' },
    ...objectLines(item as Obj, sign, depth + 1),
    { sign: ' ', depth, text: '},' },
  ];
}

/** A node of the tree the diffs' paths make: `TaskGroups[web].Count` is `TaskGroups["web"]` > `Count`. */
interface Node {
  diffs: AttributeDiff[];
  children: Map<string, Node>;
  /** Whether the node is a list item (`TaskGroups["web"] {`) rather than an object (`Config = {`). */
  item: boolean;
}

function newNode(item = false): Node {
  return { diffs: [], children: new Map(), item };
}

/**
 * `TaskGroups[web].Tasks[server].Config.image` → `TaskGroups["web"]`, `Tasks["server"]`, `Config`,
 * `image`: a name and the item key that follows it make one label.
 */
function labelsOf(path: string): { label: string; item: boolean }[] {
  const labels: { label: string; item: boolean }[] = [];
  for (const part of pathParts(path)) {
    const last = labels[labels.length - 1];
    // A quoted map key (`Env["spring.datasource.url"]`) is an entry of its map, shown as HCL writes
    // such a key: `"spring.datasource.url" = …` inside `Env = {`.
    if (part.type === 'key') labels.push({ label: formatKey(part.key), item: false });
    else if (part.type === 'item' && last)
      labels[labels.length - 1] = { label: itemLabel(last.label, part.selector), item: true };
    else if (part.type === 'item') labels.push({ label: `[${part.selector}]`, item: true });
    else labels.push({ label: part.name, item: false });
  }
  return labels;
}

function treeOf(diffs: readonly AttributeDiff[]): Node {
  const root = newNode();
  for (const d of diffs) {
    let node = root;
    for (const { label, item } of labelsOf(d.path)) {
      let child = node.children.get(label);
      if (!child) node.children.set(label, (child = newNode(item)));
      node = child;
    }
    node.diffs.push(d);
  }
  return root;
}

/** The diffs between two values, by key for objects and by name for named lists; undefined when they are not both of one of those shapes. */
function innerDiffs(before: unknown, after: unknown): AttributeDiff[] | undefined {
  let pairs: [string, unknown, unknown][];
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    pairs = keys.map((k) => [childPath('', k), before[k], after[k]]);
  } else if (isNamedList(before) && isNamedList(after)) {
    const names = [...new Set([...before.map((x) => nameOf(x)!), ...after.map((x) => nameOf(x)!)])];
    const find = (list: Obj[], n: string) => list.find((x) => nameOf(x) === n);
    pairs = names.map((n) => [`[${n}]`, find(before, n), find(after, n)]);
  } else return undefined;
  const diffs: AttributeDiff[] = [];
  for (const [path, b, a] of pairs) {
    if (JSON.stringify(b) === JSON.stringify(a)) continue;
    if (b === undefined) diffs.push({ path, op: 'add', after: a });
    else if (a === undefined) diffs.push({ path, op: 'remove', before: b });
    else diffs.push({ path, op: 'change', before: b, after: a });
  }
  return diffs;
}

function withRemarks(lines: DiffLine[], d: AttributeDiff): DiffLine[] {
  const [first, ...rest] = lines;
  if (!first) return lines;
  return [
    {
      ...first,
      ...(d.forcesReplacement ? { forcesReplacement: true } : {}),
      ...(d.note ? { note: d.note } : {}),
    },
    ...rest,
  ];
}

/** One diff at the node labelled `label`. */
function diffLines(
  label: string,
  d: AttributeDiff,
  depth: number,
  pad: (l: string) => string,
  item: boolean,
): DiffLine[] {
  // A whole list item added or removed heads its block with its label, as in a created object.
  if (item && d.op === 'add' && isObject(d.after))
    return withRemarks(itemBlock(label, d.after, '+', depth), d);
  if (item && d.op === 'remove' && isObject(d.before))
    return withRemarks(itemBlock(label, d.before, '-', depth), d);
  switch (d.op) {
    case 'add':
      return withRemarks(valueLines(label, d.after, '+', depth, pad), d);
    case 'remove':
      return withRemarks(valueLines(label, d.before, '-', depth, pad), d);
    case 'change':
      return withRemarks(changedLines(label, d, depth, pad, item), d);
  }
}

function changedLines(
  label: string,
  d: AttributeDiff,
  depth: number,
  pad: (l: string) => string,
  item = false,
): DiffLine[] {
  const { before, after } = d;
  // Neither side of a secret can be shown; saying that it changed is all there is to say.
  if (d.sensitive) return [{ sign: '~', depth, text: `${pad(label)} = ${SENSITIVE_CHANGED}` }];
  // A change the kind can tell happens but not to what (its note says why): the attribute alone,
  // never `= null -> null`, which reads as the attribute emptied.
  if (!('before' in d) && !('after' in d)) return [{ sign: '~', depth, text: label }];
  if (typeof before === 'string' && typeof after === 'string' && (isMultiline(before) || isMultiline(after)))
    return [{ sign: '~', depth, text: `${pad(label)} = <<-EOT` }, ...heredocDiff(before, after, depth)];
  if (isShort(before) && isShort(after))
    return [{ sign: '~', depth, text: `${pad(label)} = ${formatValue(before)} -> ${formatValue(after)}` }];
  const inner = innerDiffs(before, after);
  // A named list changes item by item, each item a block at the list's own depth.
  if (inner && isNamedList(before)) return treeLines(treeOf(inner), depth, label);
  if (inner)
    return [
      { sign: '~', depth, text: item ? `${label} {` : `${pad(label)} = {` },
      ...treeLines(treeOf(inner), depth + 1),
      { sign: ' ', depth, text: '}' },
    ];
  // Different shapes, or an unnamed list: the old value goes, the new one comes.
  return [...valueLines(label, before, '-', depth, pad), ...valueLines(label, after, '+', depth, pad)];
}

/**
 * The lines of a tree of diffs: at each level, attributes that changed (padded to one `=` column),
 * then a block for each attribute changed inside. `list` names a named list whose items the level holds.
 */
function treeLines(node: Node, depth: number, list?: string, before?: Obj): DiffLine[] {
  const entries = [...node.children.entries()].map(([label, child]) => ({
    label: list && label.startsWith('[') ? itemLabel(list, label.slice(1, -1)) : label,
    child,
  }));
  const pad = padder(entries.filter((e) => e.child.children.size === 0 && !e.child.item).map((e) => e.label));
  return entries.flatMap(({ label, child }) => [
    ...listItemLines(label, child.diffs, depth, pad, before?.[label]),
    ...child.diffs
      .filter((d) => !d.item)
      .flatMap((d) => diffLines(label, d, depth, child.item ? (l) => l : pad, child.item)),
    ...(child.children.size === 0
      ? []
      : [
          { sign: '~' as const, depth, text: child.item ? `${label} {` : `${pad(label)} = {` },
          ...treeLines(child, depth + 1),
          { sign: ' ' as const, depth, text: '}' },
        ]),
  ]);
}

function itemBlock(label: string, item: Obj, sign: Sign, depth: number): DiffLine[] {
  return [
    { sign, depth, text: `${label} {` },
    ...objectLines(item, sign, depth + 1),
    { sign: ' ', depth, text: '}' },
  ];
}

/**
 * The items that come and go in a list attribute (diffs marked `item`), as terraform shows a set:
 * `~ groups = [` then `- "ops",` and `+ "dev",` one a line, and how many items stay, hidden. The
 * attribute is not removed nor set to one item, which is what `- groups = "ops"` would say.
 */
function listItemLines(
  label: string,
  diffs: readonly AttributeDiff[],
  depth: number,
  pad: (l: string) => string,
  before: unknown,
): DiffLine[] {
  const items = diffs.filter((d) => d.item);
  if (items.length === 0) return [];
  const removed = items.filter((d) => d.op === 'remove').length;
  // The live list, when the change carries it, tells how many items stay as they are.
  const kept = Array.isArray(before) ? before.length - removed : 0;
  return [
    { sign: '~', depth, text: `${pad(label)} = [` },
    ...items.flatMap((d) => {
      const sign = d.op === 'remove' ? '-' : '+';
      const value = d.op === 'remove' ? d.before : d.after;
      return withRemarks(itemLines(value, sign, depth + 1), d);
    }),
    ...(kept > 0
      ? [
          {
            sign: ' ' as const,
            depth: depth + 1,
            text: `# (${kept} unchanged item${kept === 1 ? '' : 's'} hidden)`,
          },
        ]
      : []),
    { sign: ' ', depth, text: ']' },
  ];
}

/**
 * The lines of an update's diffs, nested by their paths. `before` is the live object's attributes,
 * which tell how many items of a list attribute stay unchanged.
 */
export function diffTreeLines(
  diffs: readonly AttributeDiff[],
  before?: Record<string, unknown> | null,
): DiffLine[] {
  return treeLines(treeOf(diffs), 0, undefined, before ?? undefined);
}
