/**
 * `--target` and `--exclude`: plan and apply a part of the manifest. Patterns are matched against the
 * address the plan prints (`LdapUser/ldap/alice`, `Workspace@eu/acme/web`), case as printed, as
 * picomatch globs where `*` stays inside one segment and `**` crosses `/` (so `AclRole/*` matches
 * nothing: a role's address has a namespace segment; `AclRole/**` matches every role, on every
 * connection unless the pattern names one: `AclRole@eu/**`).
 *
 * As Terraform's `-target`, a target pulls in what it depends on (a directory user: its groups and its
 * mount's config), transitively. As Terraform's `-exclude`, an exclusion wins: an excluded object is
 * left out, and so is every selected object that needs it (planning the dependant alone could create
 * it before what it needs exists); the plan says which were left out and why.
 */
import { editDistance } from '../common/edit-distance.js';
import { LIBRARY_SETTING_NAMES, type SettingNames } from '../common/setting-names.js';
import picomatch from 'picomatch';
import { addressOf, type Desired, hasDependencies } from '../resources/contract.js';
import type { KindLookup } from '../planner/planner.js';
import type { Targeting } from '../planner/types.js';
import { EngineError } from './errors.js';

export interface TargetPatterns {
  /** `--target`: only these addresses (and what they need); none: every object. */
  targets?: readonly string[];
  /** `--exclude`: never these addresses, nor what needs them. */
  excludes?: readonly string[];
}

export interface Selection {
  /** The declared objects to plan. */
  desired: Desired[];
  /** What the plan says about the selection (headline, notes); undefined when nothing was filtered. */
  targeting?: Targeting;
  /** Whether a live object at this address (a prune candidate) is in the selection's reach. */
  covers(address: string): boolean;
  /** Whether some target could match an object of this kind (prune reads only such kinds). */
  touchesKind(kind: string): boolean;
  /**
   * Throws an `EngineError` for a pattern that matches none of the declared objects nor of `more`
   * (live objects a prune considered): a typo must not go unnoticed.
   */
  requireMatches(more?: readonly string[]): void;
}

const GLOB_OPTIONS = { dot: true, nobrace: true, noextglob: true } as const;

type Matcher = (address: string) => boolean;

function matcherOf(patterns: readonly string[]): Matcher {
  const matchers = patterns.map(patternMatcher);
  return (address) => matchers.some((m) => m(address));
}

/**
 * One pattern's matcher. A pattern that names no connection (`AclRole/**`, `AclRole/default/web`)
 * matches the kind on every connection: the connection says where an object lives, as a provider
 * alias does in Terraform, not what it is. An `--exclude AclRole/**` that missed `AclRole@eu/…` let a
 * prune delete an excluded role. A pattern with `@CONNECTION` (`AclRole@eu/**`) keeps to it.
 */
function patternMatcher(pattern: string): Matcher {
  const m = picomatch(pattern, GLOB_OPTIONS);
  if (pattern.split('/')[0]!.includes('@')) return m;
  return (address) => m(address) || m(withoutConnection(address));
}

/**
 * The addresses a pattern names, globs as `--target` takes them (`AclRole/default/*`); a pattern
 * that is no glob names itself, so a caller can say it is not declared.
 */
export function addressesMatching(pattern: string, addresses: readonly string[]): string[] {
  if (!picomatch.scan(pattern).isGlob) return [pattern];
  const matches = patternMatcher(pattern);
  return addresses.filter(matches);
}

/** `AclRole/default/web` of `AclRole@eu/default/web`. */
function withoutConnection(address: string): string {
  const slash = address.indexOf('/');
  const first = slash < 0 ? address : address.slice(0, slash);
  const at = first.indexOf('@');
  return at < 0 ? address : first.slice(0, at) + address.slice(first.length);
}

/** The kind part of a pattern (`LdapUser` of `LdapUser@eu/ldap/*`), as its own glob. */
function kindMatcher(patterns: readonly string[]): Matcher {
  const matchers = patterns.map((p) => picomatch(p.split('/')[0]!.split('@')[0]!, GLOB_OPTIONS));
  return (kind) => matchers.some((m) => m(kind));
}

/** Picks the declared objects the patterns select; `requireMatches` then refuses a pattern that matched nothing. */
export function selectTargets(
  all: readonly Desired[],
  lookup: KindLookup,
  patterns: TargetPatterns,
  names: SettingNames = LIBRARY_SETTING_NAMES,
): Selection {
  const targets = patterns.targets ?? [];
  const excludes = patterns.excludes ?? [];
  // An empty pattern (a CI variable left unset) was dropped, and with it the selection: `--target ""`
  // planned and applied every object. It names nothing, so it is refused, as a pattern matching
  // nothing is.
  for (const [setting, list] of [
    ['targets', targets],
    ['excludes', excludes],
  ] as const) {
    if (list.some((p) => p.trim() === ''))
      throw new EngineError(
        `${names[setting]}: an empty address selects nothing (an unset variable gives one); name an address or a glob as the plan prints it${setting === 'targets' ? `, or leave ${names[setting]} out to plan every object` : ''}`,
      );
  }
  if (targets.length === 0 && excludes.length === 0) {
    return { desired: [...all], covers: () => true, touchesKind: () => true, requireMatches: () => {} };
  }
  const addresses = all.map((d) => addressOf(d.key));
  const requireMatches = (more?: readonly string[]) => {
    const known = [...addresses, ...(more ?? [])];
    for (const [setting, list] of [
      ['targets', targets],
      ['excludes', excludes],
    ] as const) {
      for (const pattern of list) {
        const m = patternMatcher(pattern);
        if (!known.some((a) => m(a))) throw noMatch(names, setting, pattern, known, more !== undefined);
      }
    }
  };
  const isTarget = targets.length > 0 ? matcherOf(targets) : () => true;
  const isExcluded = excludes.length > 0 ? matcherOf(excludes) : () => false;
  const byAddress = new Map(all.map((d) => [addressOf(d.key), d]));
  const needs = (d: Desired): string[] => {
    const kind = lookup(d.key.kind);
    if (!hasDependencies(kind) || d.ensure === 'absent') return [];
    return kind
      .dependencies({ key: d.key, desired: d })
      .map(addressOf)
      .filter((a) => byAddress.has(a));
  };

  // The targets and, transitively, every declared object they need.
  const chosen = new Set<string>();
  const queue = addresses.filter((a) => isTarget(a));
  while (queue.length > 0) {
    const address = queue.pop()!;
    if (chosen.has(address)) continue;
    chosen.add(address);
    queue.push(...needs(byAddress.get(address)!));
  }

  // Exclusions win, and take with them whatever needs an excluded object, until nothing changes.
  const notes: string[] = [];
  const out = new Set([...chosen].filter((a) => isExcluded(a)));
  for (let changed = true; changed;) {
    changed = false;
    for (const address of chosen) {
      if (out.has(address)) continue;
      const missing = needs(byAddress.get(address)!).find((a) => out.has(a));
      if (missing === undefined) continue;
      out.add(address);
      changed = true;
      notes.push(`${address} left out: it needs ${missing}, which ${names.excludes} leaves out`);
    }
  }
  // What is left: the targets still in and what they need. An object pulled in only for a target
  // that is now out goes too: planned alone, it was no part of what the patterns asked for.
  const kept = new Set<string>();
  const keep = [...chosen].filter((a) => isTarget(a) && !out.has(a));
  while (keep.length > 0) {
    const address = keep.pop()!;
    if (kept.has(address)) continue;
    kept.add(address);
    keep.push(...needs(byAddress.get(address)!));
  }
  // Who needs whom among the dropped, once: asked per dropped object, it was n² dependency calls.
  const dependants = new Map<string, string[]>();
  for (const a of chosen) {
    if (kept.has(a)) continue;
    for (const needed of needs(byAddress.get(a)!))
      dependants.set(needed, [...(dependants.get(needed) ?? []), a]);
  }
  for (const address of chosen) {
    if (out.has(address) || kept.has(address)) continue;
    const neededBy = dependants.get(address) ?? [];
    notes.push(
      `${address} left out: only ${neededBy.join(', ')} needed it, and ${neededBy.length === 1 ? 'that is' : 'those are'} left out`,
    );
  }
  const desired = all.filter((d) => kept.has(addressOf(d.key)));
  const isTargetKind = targets.length > 0 ? kindMatcher(targets) : () => true;
  return {
    desired,
    targeting: {
      targets: [...targets],
      excludes: [...excludes],
      selected: desired.length,
      total: all.length,
      notes,
    },
    // A live object the manifest does not declare (a prune candidate): by the patterns alone.
    covers: (address) => isTarget(address) && !isExcluded(address),
    touchesKind: isTargetKind,
    requireMatches,
  };
}

function noMatch(
  names: SettingNames,
  setting: 'targets' | 'excludes',
  pattern: string,
  addresses: readonly string[],
  pruning: boolean,
): EngineError {
  // Addresses of the kind the pattern names come first: `AclRole/*` wants a role, not an LDAP config.
  const kindOf = picomatch(kindPart(pattern), GLOB_OPTIONS);
  let sameKind = addresses.filter((a) => kindOf(kindPart(a)));
  let fixes = fixedGlobs(pattern, sameKind);
  // The kind in another letter case (`aclrole/**`): the same pattern with the kind as printed.
  if (sameKind.length === 0) {
    const anyCase = picomatch(kindPart(pattern), { ...GLOB_OPTIONS, nocase: true });
    const kinds = [...new Set(addresses.map(kindPart).filter((k) => anyCase(k)))];
    if (kinds.length === 1) {
      const recased = `${kinds[0]!}${pattern.slice(kindPart(pattern).length)}`;
      sameKind = addresses.filter((a) => kindPart(a) === kinds[0]);
      const matches = picomatch(recased, GLOB_OPTIONS);
      fixes = sameKind.some((a) => matches(a)) ? [recased] : fixedGlobs(recased, sameKind);
    }
  }
  const closest = closestAddresses(pattern, sameKind.length > 0 ? sameKind : addresses, 3);
  // A connection no object is on (a misspelt or undeclared one) is said as such: the closest
  // addresses alone did not tell that `@us` was the part that matched nothing.
  const connection = pattern.split('/')[0]!.split('@')[1];
  const onConnections = [...new Set(addresses.map((a) => a.split('/')[0]!.split('@')[1] ?? ''))].sort();
  const named = onConnections.map((c) => (c === '' ? 'the default connection' : `@${c}`));
  const unknownConnection =
    connection !== undefined && !picomatch.scan(connection).isGlob && !onConnections.includes(connection)
      ? `; no object of the manifest is on a connection named "${connection}" (they are on ${named.join(', ')})`
      : '';
  return new EngineError(
    `${names[setting]} ${pattern} matches no object of the manifest${
      pruning && setting === 'targets' ? ` (nor any that ${names.prune} would delete or lists)` : ''
    }${unknownConnection}${fixes.length > 0 ? `; did you mean ${fixes.join(' or ')}?` : ''}${
      closest.length > 0 ? `; the closest addresses are ${closest.join(', ')}` : ' (it declares none)'
    }. Addresses are written as the plan prints them: KIND/NAMESPACE/NAME or KIND/NAME, case as printed; * stays inside one segment, ** crosses /`,
  );
}

/** `LdapUser` of `LdapUser@eu/ldap/alice`. */
function kindPart(address: string): string {
  return address.split('/')[0]!.split('@')[0]!;
}

/**
 * A glob of the right kind with the wrong number of segments fixed (`AclRole/*` for roles, whose
 * addresses have a namespace segment): the kind with `**`, or a `*` segment inserted before the
 * last one, or one segment fewer; each suggested only when it matches some of the kind's addresses.
 */
function fixedGlobs(pattern: string, sameKind: readonly string[]): string[] {
  if (sameKind.length === 0 || !picomatch.scan(pattern).isGlob) return [];
  const segments = pattern.split('/');
  const candidates = [`${segments[0]}/**`];
  if (segments.length >= 2) candidates.push([...segments.slice(0, -1), '*', segments.at(-1)!].join('/'));
  if (segments.length >= 3) candidates.push([...segments.slice(0, -2), segments.at(-1)!].join('/'));
  return [...new Set(candidates)].filter((c) => c !== pattern && sameKind.some((a) => patternMatcher(c)(a)));
}

/** The `n` addresses nearest to `text` by edit distance (case-insensitive), nearest first. */
export function closestAddresses(text: string, addresses: readonly string[], n: number): string[] {
  const lower = text.toLowerCase();
  return [...new Set(addresses)]
    .map((a) => ({ a, d: editDistance(lower, a.toLowerCase()) }))
    .sort((x, y) => x.d - y.d || x.a.localeCompare(y.a))
    .slice(0, n)
    .map((x) => x.a);
}
