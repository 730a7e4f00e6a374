/**
 * Saved plans (`plan -out FILE`, `apply FILE`). The file records the plan as rendered (secrets
 * masked), the manifest paths, each object's observed version, and a digest of what the manifest
 * asked for — never a secret. `apply FILE` loads the manifest again and refuses when it no longer
 * asks for exactly what was reviewed (a changed spec, a changed state file, a deletion that is no
 * longer wanted), and the applier refuses each object whose live state moved since the plan.
 *
 * The file is tamper-evident: it carries an HMAC-SHA-256, made with the state key, over its canonical
 * content. A plan edited after review (an update turned into a delete) would otherwise be applied as
 * edited, since the manifest check only covers what the manifest declares.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { jsonNestsDeeperThan } from '../common/json-depth.js';
import { realpathSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Change, Plan } from '../planner/types.js';
import { summarise } from '../planner/types.js';
import { canonicalJson } from '../resources/compare.js';
import { addressOf, type Desired, type KindContext } from '../resources/contract.js';
import { maskAttributes, secretPaths, secretValues } from '../planner/masking.js';
import type { WriteOnlyDigests } from '../planner/write-only.js';
import type { Catalog } from './catalog.js';
import type { InventoryIdentity, ManagedObjects } from './inventory.js';
import type { DeletionRecord } from './inventory-document.js';
import { EngineError, type SavedPlanRemedy } from './errors.js';
import { jsonOut, printable } from '../common/printable.js';
import { truncate } from '../common/scrub.js';
import { defaultCatalog } from './services.js';
import type { StateKey } from './state-key.js';

const FORMAT = 'converge-plan';
/**
 * 2: each change's `digest` is keyed with the state key (a plain SHA-256 before), and the plan
 * records `inventory_serial`. A format-1 plan's digests can never match: it is refused as made by
 * another Converge rather than as a manifest that changed.
 */
/**
 * 3: the plan's kind switches (`options`) are applied with it, and its service addresses
 * (`services`) are compared before anything is sent. A format-2 plan was not held to either by the
 * Converge that made it (one made before they were recorded has neither): made again.
 */
/*
 * Still 3 with `inventory` (the inventory the plan was made with): the field is additive, so a
 * format-3 plan saved before it was recorded stays readable and is applied as before (no inventory
 * to compare), and a Converge that does not know the field reads a plan carrying it as it did.
 */
const FORMAT_VERSION = 3;

interface SavedChange extends Omit<Change, 'desired' | 'observed' | 'serverPlan'> {
  /** Digest of what the manifest asked for; absent for deletions of objects it does not declare. */
  digest?: string;
}

export interface SavedPlan {
  format: typeof FORMAT;
  format_version: number;
  converge_version: string;
  created_at: string;
  /** Absolute manifest paths, so the plan applies from any folder. */
  manifest: string[];
  prune: boolean;
  /** `--target` / `--exclude` patterns the plan was made with; `apply FILE` plans the same part. */
  targets?: string[];
  excludes?: string[];
  /** `--max-deletes` the plan was made with: the command that makes it again keeps the guard. */
  max_deletes?: number;
  /**
   * Kind switches the plan was made with (`force-unlock`): `apply FILE` runs with exactly these, so
   * it does what the reviewed plan showed, no more (covered by the MAC).
   */
  options?: string[];
  /**
   * Where each service the plan read lives (`registry`, `registry@staging` for a named Connection):
   * `apply FILE` refuses to send the plan elsewhere (another cluster, the wrong CI environment).
   */
  services?: Record<string, string>;
  /**
   * The inventory's write count when the plan was made: deletions recorded by later writes undo
   * the plan's creates (`createsDeletedSince`). Absent in plans saved before it was recorded.
   */
  inventory_serial?: number;
  /**
   * The inventory the plan was made with (its file, or its workspace and the workspaces service's
   * address): `apply FILE` refuses to apply the plan with another one, whose records of what
   * Converge owns are not those the plan's deletions were chosen by. Absent in plans saved before it
   * was recorded.
   */
  inventory?: InventoryIdentity;
  changes: SavedChange[];
  /** The fingerprint of the state key that made `mac` (state-key.ts), and where that key came from. */
  key_id: string;
  key_source: string;
  /** HMAC-SHA-256 (hex) with the state key over the canonical JSON of every other field. */
  mac: string;
}

const MAC_LABEL = 'converge plan file mac\u0000';

/** The MAC of a plan's content: every field but `mac`, as canonical JSON of its JSON form. */
function planMac(saved: Omit<SavedPlan, 'mac'> & { mac?: unknown }, key: Buffer): string {
  const { mac: _mac, ...content } = saved;
  // Through JSON first, so the writer (with possibly undefined fields) and the reader agree.
  const canonical = canonicalJson(JSON.parse(JSON.stringify(content)));
  return createHmac('sha256', key).update(MAC_LABEL).update(canonical).digest('hex');
}

/**
 * What the manifest asked for, as a digest: the spec (without the kind's secret attributes, which
 * a plan file must not make guessable), `ensure`, and local inputs such as a state file's content.
 */
export function desiredDigest(desired: Desired, catalog: Catalog, keyed: WriteOnlyDigests): string {
  const kind = catalog.kind(desired.key.kind);
  const paths = kind ? secretPaths(kind) : [];
  const spec = maskAttributes(paths, desired.spec);
  // Secrets count too (a password changed after the review must refuse the plan), but only keyed:
  // a plain hash of a short secret could be brute-forced from the plan file.
  const address = addressOf(desired.key);
  const secrets = secretValues(paths, desired.spec).map((v) => keyed.digest(address, 'secret', v));
  // Keyed as a whole, not a plain hash: a sensitive value copied into any other field (a
  // description holding \${env:DB_PASSWORD}) is in `spec`, and a plain SHA-256 of a spec the
  // repository shows could be brute-forced from a plan file uploaded as a CI artifact.
  return keyed.digest(
    address,
    'desired',
    canonicalJson({ spec, secrets, ensure: desired.ensure ?? 'present', local: desired.local ?? null }),
  );
}

function strip(change: Change, catalog: Catalog, keyed: WriteOnlyDigests): SavedChange {
  const { desired, observed: _o, serverPlan: _p, ...rest } = change;
  return desired ? { ...rest, digest: desiredDigest(desired, catalog, keyed) } : rest;
}

/** What a saved plan records beside the plan, and the keys that protect it. */
export interface WritePlanOptions {
  /** The manifest paths the plan was made from (recorded absolute, so it applies from any folder). */
  manifest: readonly string[];
  prune: boolean;
  /** `--target` / `--exclude` patterns the plan was made with (covered by the MAC). */
  targets?: readonly string[];
  excludes?: readonly string[];
  /** `--max-deletes` the plan was made with, repeated in the command that makes it again. */
  maxDeletes?: number;
  /** Kind switches the plan was made with (`force-unlock`). */
  options?: readonly string[];
  /** Where each service the plan read lives (`ServiceConnections.addresses`). */
  services?: Readonly<Record<string, string>>;
  /** The inventory's write count as the plan read it (`LocalInventory.serial`). */
  inventorySerial?: number;
  /** Which inventory the plan read (`InventoryBackend.identity`). */
  inventory?: InventoryIdentity;
  /** The Converge version that made the plan. */
  version: string;
  /** Keys the digests of secret values (the inventory), so they cannot be guessed from the file. */
  digests: WriteOnlyDigests;
  /** Signs the file (the inventory's `stateKey()`); `apply` checks it with the same key. */
  key: StateKey;
  /** The services and kinds the plan was made with; default: `defaultCatalog`. */
  catalog?: Catalog;
}

const MAX_PLAN_FILE_NESTING = 200;

/** Saves a plan for a later `apply FILE`: secrets masked, mode 0600, written whole or not at all. */
export async function writePlanFile(file: string, plan: Plan, options: WritePlanOptions): Promise<void> {
  const text = savedPlanText(plan, options);
  // Written beside the target and renamed, so a crash never leaves half a plan.
  const tmp = temporaryBeside(file);
  try {
    await writeFile(tmp, text, { mode: 0o600 });
    await rename(tmp, file);
  } catch (error) {
    await unlink(tmp).catch(() => {});
    throw cannotWrite(file, error);
  }
}

/**
 * `writePlanFile` without a wait: the plan is in place, or nothing is, when it returns. For a
 * command that must decide and save in one step: no signal handler runs between its last check for
 * an interrupt and the rename (`converge plan -out`), and none finds half a file to leave behind.
 */
export function writePlanFileSync(file: string, plan: Plan, options: WritePlanOptions): void {
  const text = savedPlanText(plan, options);
  const tmp = temporaryBeside(file);
  try {
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, file);
  } catch (error) {
    try {
      unlinkSync(tmp);
    } catch {
      // Never made, or already renamed.
    }
    throw cannotWrite(file, error);
  }
}

function temporaryBeside(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(4).toString('hex')}.tmp`);
}

function cannotWrite(file: string, error: unknown): EngineError {
  const code = (error as NodeJS.ErrnoException).code;
  const why = code === 'ENOENT' ? `its folder ${path.dirname(file)} does not exist` : (code ?? String(error));
  return new EngineError(`cannot write plan file ${file}: ${why}`);
}

/** A saved plan's file content: the plan as recorded, signed with the state key. */
function savedPlanText(plan: Plan, options: WritePlanOptions): string {
  const { key, digests, catalog = defaultCatalog } = options;
  const content: Omit<SavedPlan, 'mac'> = {
    format: FORMAT,
    format_version: FORMAT_VERSION,
    converge_version: options.version,
    created_at: new Date().toISOString(),
    manifest: options.manifest.map((p) => path.resolve(p)),
    prune: options.prune,
    ...(options.targets?.length ? { targets: [...options.targets] } : {}),
    ...(options.excludes?.length ? { excludes: [...options.excludes] } : {}),
    ...(options.maxDeletes !== undefined ? { max_deletes: options.maxDeletes } : {}),
    ...(options.options?.length ? { options: [...options.options] } : {}),
    ...(options.services && Object.keys(options.services).length > 0
      ? { services: { ...options.services } }
      : {}),
    ...(options.inventorySerial !== undefined ? { inventory_serial: options.inventorySerial } : {}),
    ...(options.inventory ? { inventory: { ...options.inventory } } : {}),
    changes: plan.changes.map((c) => strip(c, catalog, digests)),
    key_id: key.id,
    key_source: key.source,
  };
  const saved: SavedPlan = { ...content, mac: planMac(content, key.key) };
  // Inert as text: a control character a service wrote (a lock reason) is escaped, so printing the
  // file to a terminal or a CI log acts on nothing; it reads back as the same value.
  return `${jsonOut(saved, null, 2)}\n`;
}

/** Reads a saved plan, refusing what is not one or is of another format; `verifyPlanFile` checks its MAC. */
export async function readPlanFile(file: string): Promise<SavedPlan> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new EngineError(
      code === 'ENOENT'
        ? `plan file ${file} does not exist (make one with \`converge plan -f PATH -out ${file}\`)`
        : code === 'EISDIR'
          ? `${file} is a folder, not a plan file (to apply a manifest folder, give it with -f)`
          : `cannot read plan file ${file}: ${code ?? String(error)}`,
    );
  }
  // A manifest given without -f lands here: say how to apply one.
  const manifestHint = /\.ya?ml$/i.test(file)
    ? ` (to apply a manifest, give it with -f: apply -f ${file})`
    : '';
  // A plan's values nest as the objects they hold (a service's, at most 128 levels) plus a few
  // levels of the file's own: deeper is no plan Converge wrote, and would overflow the stack of the
  // MAC check that walks it.
  if (jsonNestsDeeperThan(text, MAX_PLAN_FILE_NESTING))
    throw new EngineError(
      `${file} is not a Converge plan file (its JSON nests deeper than ${MAX_PLAN_FILE_NESTING} levels)`,
    );
  let saved: SavedPlan;
  try {
    saved = JSON.parse(text) as SavedPlan;
  } catch {
    throw new EngineError(`${file} is not a Converge plan file (not JSON)${manifestHint}`);
  }
  if (saved?.format !== FORMAT || !Array.isArray(saved.changes) || !Array.isArray(saved.manifest)) {
    throw new EngineError(`${file} is not a Converge plan file${manifestHint}`);
  }
  for (const field of ['targets', 'excludes', 'options'] as const) {
    const list: unknown = saved[field];
    if (list !== undefined && !(Array.isArray(list) && list.every((p) => typeof p === 'string'))) {
      const what = field === 'options' ? 'switches' : 'addresses';
      throw new EngineError(`${file} is not a Converge plan file: "${field}" is not a list of ${what}`);
    }
  }
  const services: unknown = saved.services;
  if (
    services !== undefined &&
    !(
      typeof services === 'object' &&
      services !== null &&
      !Array.isArray(services) &&
      Object.values(services).every((a) => typeof a === 'string')
    )
  ) {
    throw new EngineError(`${file} is not a Converge plan file: "services" is not a map of addresses`);
  }
  if (saved.inventory !== undefined && !isInventoryIdentity(saved.inventory)) {
    throw new EngineError(`${file} is not a Converge plan file: "inventory" does not name an inventory`);
  }
  if (saved.format_version !== FORMAT_VERSION) {
    throw new EngineError(
      `${file} has plan format ${printable(String(saved.format_version)).slice(0, 20)}, made by ${typeof saved.converge_version === 'string' ? `Converge ${printable(saved.converge_version).slice(0, 40)}` : 'another Converge'}; this Converge reads format ${FORMAT_VERSION}: make the plan again with this Converge`,
    );
  }
  return saved;
}

/**
 * Refuses a saved plan whose MAC does not verify with this run's state key: one edited after review,
 * one without a MAC, or one made under another key (the plan and apply jobs must share the key).
 */
export function verifyPlanFile(
  saved: SavedPlan,
  file: string,
  current: StateKey | undefined,
  noKey: string,
): void {
  const share =
    'The job that plans and the job that applies must share CONVERGE_STATE_KEY (or the same state.key file)';
  const signedBy =
    typeof saved.key_id === 'string'
      ? // What an unverified file says, shown inert and short: it could forge a line of the output.
        `state key ${truncate(printable(saved.key_id), 80)} (from ${truncate(printable(String(saved.key_source)), 200)})`
      : 'an unknown state key';
  const again = 'plan it again as it was made (same manifest, prune, targets and excludes) and review it';
  const remake = unverifiedRemedy(file);
  if (typeof saved.mac !== 'string' || saved.mac === '') {
    throw new EngineError(
      `${file} carries no MAC, so nothing shows it is the plan that was reviewed: refusing it. ${
        current ? `This run's state key is ${current.id} (from ${current.source}); ` : ''
      }${again}.`,
      remake,
    );
  }
  if (!current) {
    throw new EngineError(
      `${file} was signed with ${signedBy}, and this run has no state key (${noKey}): refusing it. ${share}; set it to the key the plan was made with.`,
    );
  }
  if (saved.key_id !== current.id) {
    throw new EngineError(
      `${file} was signed with ${signedBy}, but this run's state key is ${current.id} (from ${current.source}): refusing it. ${share}; set it to the key the plan was made with, or ${again}.`,
      remake,
    );
  }
  const expected = Buffer.from(planMac(saved, current.key), 'hex');
  const given = Buffer.from(saved.mac, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new EngineError(
      `${file} was changed after it was saved (its MAC does not match state key ${current.id} from ${current.source}): refusing to apply what was not reviewed; ${again}.`,
      remake,
    );
  }
}

/**
 * Pairs a saved plan with a fresh plan of the same manifest: the saved changes, carrying the fresh
 * plan's desired objects. Refuses when the manifest no longer asks for what was saved: an object's
 * digest differs, a declared object appeared or vanished, or a deletion is no longer wanted.
 */
export function reconcileSavedPlan(
  saved: SavedPlan,
  fresh: Plan,
  options: {
    /** The saved plan's file, for messages. */
    file: string;
    /** The same digests the plan was saved with (the inventory). */
    digests: WriteOnlyDigests;
    /**
     * The inventory's objects: a saved create found done counts as in effect only when Converge
     * recorded the object as its own (an earlier apply of the plan); anything else made it.
     */
    managed?: Pick<ManagedObjects, 'entry'>;
    catalog?: Catalog;
  },
): Plan {
  const { file, digests: keyed, catalog = defaultCatalog } = options;
  /** Recorded as Converge's, as the very object live now (an old record of a namesake is not). */
  const ownsNow = (address: string, liveId: string | undefined) => {
    const entry = options.managed?.entry(address);
    return entry?.owned === true && (entry.id === undefined || liveId === undefined || entry.id === liveId);
  };
  const freshByAddress = new Map(fresh.changes.map((c) => [c.address, c]));
  // An object the fresh plan has a problem with is in no state to call the saved change done.
  const troubled = troubledAddresses(fresh);
  const mismatched: string[] = [];
  const changes = saved.changes.map((s): Change => {
    const { digest, ...change } = s;
    const f = freshByAddress.get(s.address);
    const freshDigest = f?.desired ? desiredDigest(f.desired, catalog, keyed) : undefined;
    if (digest !== freshDigest) mismatched.push(s.address);
    const done = troubled.has(s.address)
      ? undefined
      : alreadyInEffect(change, f, file, ownsNow(change.address, f?.id));
    if (done) return done;
    return { ...change, ...(f?.desired ? { desired: f.desired } : {}) };
  });
  // A saved deletion the fresh plan has nothing left to delete for is done: left out of the plan
  // (an object gone is not "up to date"); `alreadyDeleted` says which, for the front end to tell.
  const gone = (c: Change) => c.action === 'delete' && !freshByAddress.has(c.address);
  const savedAddresses = new Set(saved.changes.map((c) => c.address));
  for (const f of fresh.changes) if (f.desired && !savedAddresses.has(f.address)) mismatched.push(f.address);
  if (mismatched.length > 0) {
    throw new EngineError(
      // What changed may be no file of the manifest at all: a variable or a file it reads. The
      // remedy (the plan command, as the plan was made) follows; it is not said twice.
      `the manifest asks for something else than when ${file} was saved (${mismatched.map(printable).join(', ')}): one of its files changed, or a variable or file it reads (\${env:…}, \${file:…}).`,
      remakeRemedy(saved, file),
    );
  }
  const kept = changes.filter((c) => !gone(c));
  return { ...fresh, changes: kept, summary: summarise(kept) };
}

/**
 * The objects the fresh plan has a problem with that changed on the service since the plan was saved
 * (their observed version moved): someone else's write, a workspace's state replaced by another
 * lineage say, not the manifest's fault. Such a plan is stale, as an object that moved with no problem
 * would be: the reviewed plan no longer describes what would happen.
 */
export function movedSincePlan(saved: SavedPlan, fresh: Plan): string[] {
  const troubled = troubledAddresses(fresh);
  const now = new Map(fresh.changes.map((c) => [c.address, c.observedVersion]));
  return saved.changes
    .filter((c) => {
      if (!troubled.has(c.address) || c.observedVersion === undefined) return false;
      const version = now.get(c.address);
      return version !== undefined && version !== c.observedVersion;
    })
    .map((c) => c.address);
}

/** The objects a plan has a problem with (guards of the whole plan left out). */
function troubledAddresses(plan: Plan): Set<string> {
  return new Set(plan.problems.filter((p) => p.scope !== 'plan').map((p) => addressOf(p.key)));
}

/** The saved plan's deletions with nothing left to delete: left out by `reconcileSavedPlan`. */
/**
 * Of `addresses` (saved deletions the fresh plan no longer has, `alreadyDeleted`), those whose object
 * is still there: not gone, so no longer Converge's to delete (a job re-registered by hand without
 * the marker) or otherwise changed since the plan was saved. A saved plan applies whole, so these
 * make it stale; the apply said "nothing left to delete" of them and applied the rest.
 */
export async function deletionsStillThere(
  saved: SavedPlan,
  addresses: readonly string[],
  ctx: KindContext,
  catalog: Catalog,
): Promise<string[]> {
  const byAddress = new Map(saved.changes.map((c) => [c.address, c]));
  const there = await Promise.all(
    addresses.map(async (address) => {
      const change = byAddress.get(address);
      const kind = change && catalog.kind(change.key.kind);
      if (!change || !kind) return false;
      return (await kind.observe(ctx, change.key)) !== undefined;
    }),
  );
  return addresses.filter((_, i) => there[i]);
}

/**
 * The saved plan's creates of objects an apply deleted after the plan was saved (the inventory
 * remembers): a saved plan that makes them again would undo that deletion, so it is stale. A CI job
 * re-run from before a prune brought back the pruned roles, with exit 0.
 *
 * "After" compares the inventory's own write count where both the plan and the deletion carry one:
 * the plan and the prune may run on machines whose clocks differ. The times decide only for plans
 * or deletions from before the count was kept, or an inventory whose count went back (rewritten by an
 * older Converge, which does not keep it).
 */
export function createsDeletedSince(
  saved: SavedPlan,
  deletion: (address: string) => DeletionRecord | undefined,
  inventorySerial: number,
): { address: string; at: string }[] {
  const savedAt = Date.parse(saved.created_at);
  // MAC-checked, but the key may be shared: a count that is not a whole number is not one.
  const planSerial =
    Number.isSafeInteger(saved.inventory_serial) && saved.inventory_serial! >= 0
      ? saved.inventory_serial!
      : undefined;
  const countKept = planSerial !== undefined && inventorySerial >= planSerial;
  return saved.changes.flatMap((c) => {
    if (c.action !== 'create') return [];
    const deleted = deletion(c.address);
    if (deleted === undefined) return [];
    const after =
      countKept && deleted.serial !== undefined
        ? deleted.serial > planSerial
        : Number.isFinite(savedAt) && Date.parse(deleted.at) > savedAt;
    return after ? [{ address: c.address, at: deleted.at }] : [];
  });
}

/** `TaskGroups[web].Count` → `TaskGroups`: the attribute a diff path belongs to. */
function attributeOf(path: string): string {
  return /^[^.[]*/.exec(path)![0];
}

/**
 * The attributes a saved change was to change that the fresh plan of the object holds back. A saved
 * create (or replace) sets every attribute it has: whatever the fresh plan holds back was in it.
 */
function heldBackOf(saved: Pick<SavedChange, 'diffs' | 'action'>, fresh: Change | undefined): string[] {
  const held = new Set(fresh?.heldBack ?? []);
  if (held.size === 0) return [];
  if (saved.action === 'create' || saved.action === 'replace') return [...held];
  return [...new Set((saved.diffs ?? []).map((d) => attributeOf(d.path)).filter((a) => held.has(a)))];
}

/**
 * Saved changes this run would not make as saved: the fresh plan holds back an attribute the saved
 * change was to change (someone else's lock the plan released with --force-unlock, a state push
 * while someone else holds the lock). Applied, the kind's write would quietly leave it, and the
 * apply would report the change made; refused as stale instead, with the fresh plan's word why.
 */
export function heldBackSincePlan(saved: SavedPlan, fresh: Plan): { address: string; why: string }[] {
  const freshByAddress = new Map(fresh.changes.map((c) => [c.address, c]));
  return saved.changes.flatMap((s) => {
    const f = freshByAddress.get(s.address);
    const held = heldBackOf(s, f);
    if (held.length === 0) return [];
    return [
      {
        address: s.address,
        why: `the plan was to change ${held.join(', ')}, which this run leaves as it is (\`converge plan\` with this run's token says why)`,
      },
    ];
  });
}

export function alreadyDeleted(saved: SavedPlan, reconciled: Plan): string[] {
  const planned = new Set(reconciled.changes.map((c) => c.address));
  return saved.changes.filter((c) => c.action === 'delete' && !planned.has(c.address)).map((c) => c.address);
}

/**
 * A saved change the live state already shows done, as a no-op saying so: the same plan applied
 * before (a re-run CI job, an apply resumed after Ctrl-C), so applying it again would only be
 * refused as stale, object by object. The fresh plan of the same manifest found nothing to do for it.
 * A create counts only when the inventory records the
 * object as Converge's: an object someone else made, even as planned, stays a stale change (not
 * Converge's until imported).
 */
function alreadyInEffect(
  saved: Omit<SavedChange, 'digest'>,
  fresh: Change | undefined,
  file: string,
  recordedAsOwn: boolean,
): Change | undefined {
  if (saved.action === 'noop') return undefined;
  const creates = saved.action === 'create' || saved.action === 'replace';
  // A noop that holds back what the saved change was to change (a state seed the workspace moved
  // past, a lock it was to release) is not the saved change made: stale (`heldBackSincePlan`). What
  // it holds back that the saved change left alone (someone else's lock beside a description) is
  // no reason to call the rest not done.
  if (heldBackOf(saved, fresh).length > 0) return undefined;
  if (fresh?.action === 'noop' && (!creates || recordedAsOwn)) {
    const note = `already in effect: the ${saved.action} was made since ${file} was saved`;
    return { ...fresh, notes: [...(fresh.notes ?? []), note] };
  }
  return undefined;
}

/**
 * Refuses a saved plan sent to other services than it was planned against: the same manifest and
 * state key are often shared by every environment (staging and production), so neither tells a plan
 * of one from the other; the addresses do. Services this run did not contact are not compared.
 */
export function refuseOtherServices(
  saved: SavedPlan,
  current: Readonly<Record<string, { address: string; source: string }>>,
  file: string,
): void {
  const moved = Object.entries(saved.services ?? {}).flatMap(([id, planned]) => {
    const now = Object.hasOwn(current, id) ? current[id] : undefined;
    return now && now.address !== planned ? [{ id, planned, now }] : [];
  });
  if (moved.length === 0) return;
  const lines = moved.map(
    ({ id, planned, now }) =>
      `${printable(id)} at ${printable(planned)}, where this run's is ${printable(now.address)} (${now.source})`,
  );
  throw new EngineError(
    `${file} was planned against ${lines.join('; ')}: a saved plan is applied only to the services it was planned against. Check the apply's environment, or plan against these services and review that plan`,
  );
}

function isInventoryIdentity(value: unknown): value is InventoryIdentity {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  if (v.type === 'file') return typeof v.path === 'string' && (v.default === undefined || v.default === true);
  return v.type === 'workspace' && typeof v.workspace === 'string' && typeof v.address === 'string';
}

/** `file /p/inventory.json`, `workspace acme/inv at https://ws.example`: shown inert. */
export function inventoryText(identity: InventoryIdentity): string {
  return identity.type === 'file'
    ? `file ${printable(identity.path)}`
    : `workspace ${printable(identity.workspace)} at ${printable(identity.address)}`;
}

/**
 * The same inventory: equal identities, or two paths to one file (a folder behind a symbolic link).
 * The default local inventory of one run and of another are the same to a saved plan, whatever
 * their paths: a plan job and an apply job that share only the state key (each with its own
 * `.converge/`) were applied together before the inventory was recorded, and still are.
 */
function sameInventory(a: InventoryIdentity, b: InventoryIdentity): boolean {
  if (a.type === 'file' && b.type === 'file')
    return (
      (a.default === true && b.default === true) || a.path === b.path || realFile(a.path) === realFile(b.path)
    );
  if (a.type === 'workspace' && b.type === 'workspace')
    return a.workspace === b.workspace && a.address === b.address;
  return false;
}

function realFile(file: string): string {
  try {
    return path.join(realpathSync(path.dirname(file)), path.basename(file));
  } catch {
    return file;
  }
}

/**
 * Refuses a saved plan applied with another inventory than it was planned with: the plan's
 * deletions are of the objects its inventory recorded as Converge's, and its creates are to be
 * recorded there. Applied with another (a file where the plan read a workspace, an empty one), the
 * fresh plan disagrees with the saved one for no change on any service, and the run would end as
 * stale, or record what it makes where the next plan does not look. A plan saved before the
 * inventory was recorded is applied as before.
 */
export function refuseOtherInventory(
  saved: SavedPlan,
  current: InventoryIdentity | undefined,
  file: string,
  currentSource: string,
): void {
  const planned = saved.inventory;
  if (planned === undefined) return;
  if (current !== undefined && sameInventory(planned, current)) return;
  const now = current ? inventoryText(current) : 'one Converge cannot name';
  const setting =
    planned.type === 'file'
      ? `CONVERGE_INVENTORY=file:${printable(planned.path)}`
      : `CONVERGE_INVENTORY=workspace:${printable(planned.workspace)} and CONVERGE_WORKSPACES_ADDR pointing at ${printable(planned.address)}`;
  throw new EngineError(
    `${file} was planned with the inventory ${inventoryText(planned)}${planned.type === 'file' && planned.default ? ' (the default under CONVERGE_STATE_DIR)' : ''}, but this run's is ${now} (${currentSource}): a saved plan is applied only with the inventory it was planned with, which holds the records of what it may prune and is where it records what it makes. Apply it with ${setting}, or plan again with this run's inventory and review that plan`,
  );
}

/** A plan file that did not verify: how to make it again, repeating nothing the file says. */
function unverifiedRemedy(file: string): SavedPlanRemedy {
  return {
    remedy: 'make-saved-plan-again',
    manifest: [],
    prune: false,
    targets: [],
    excludes: [],
    file,
    verified: false,
  };
}

/** How to make the saved plan again, for a front end to say in its own words. */
function remakeRemedy(saved: SavedPlan, file: string): SavedPlanRemedy {
  return {
    remedy: 'make-saved-plan-again',
    manifest: (Array.isArray(saved.manifest) ? saved.manifest : []).map(String),
    prune: Boolean(saved.prune),
    targets: (saved.targets ?? []).map(String),
    excludes: (saved.excludes ?? []).map(String),
    options: (saved.options ?? []).map(String),
    // Checked here too: the remedy is said before the MAC is, of a file anyone may have edited.
    ...(Number.isSafeInteger(saved.max_deletes) && saved.max_deletes! >= 0
      ? { maxDeletes: saved.max_deletes! }
      : {}),
    file,
    verified: true,
  };
}
