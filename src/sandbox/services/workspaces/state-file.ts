/**
 * The engine's state file (format version 4) as the service reads it: decoding the uploaded base64,
 * checking it is a state file, and deriving the attributes a state version shows (resources, modules,
 * providers, resource count, outputs).
 *
 * ```json
 * {"version":4,"terraform_version":"1.9.8","serial":3,"lineage":"…","outputs":{"ip":{"value":"…","type":"string"}},
 *  "resources":[{"mode":"managed","type":"null_resource","name":"a","provider":"provider[\"registry.terraform.io/hashicorp/null\"]","instances":[{…}]}]}
 * ```
 */
import { createHash } from 'node:crypto';

export interface StateResource {
  mode: string;
  type: string;
  name: string;
  module?: string;
  provider: string;
  instances: unknown[];
}

export interface StateOutput {
  value: unknown;
  type: unknown;
  sensitive?: boolean;
}

export interface StateFile {
  version: number;
  terraformVersion: string;
  serial: number;
  lineage: string | null;
  outputs: Record<string, StateOutput>;
  resources: StateResource[];
}

export const STATE_FORMAT_VERSION = 4;

/** Strict base64 (standard alphabet, optional padding): anything else is not a decodable state. */
export function decodeBase64(text: string): Buffer | undefined {
  const compact = text.replace(/\s+/g, '');
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/.test(compact))
    return undefined;
  return Buffer.from(compact, 'base64');
}

export function md5Hex(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('hex');
}

/** Parses a raw state file; the message says what is wrong (for a 422). */
export function parseStateFile(bytes: Uint8Array): StateFile | string {
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return 'State is not a valid JSON state file';
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return 'State must be a JSON object';
  const d = doc as Record<string, unknown>;
  // UNCONFIRMED: the real service also reads older formats; the sandbox only knows version 4.
  if (d.version !== STATE_FORMAT_VERSION) return `State version must be ${STATE_FORMAT_VERSION}`;
  if (!Number.isSafeInteger(d.serial) || (d.serial as number) < 0) return 'State serial must be an integer';
  if (d.lineage !== undefined && typeof d.lineage !== 'string') return 'State lineage must be a string';
  if (d.terraform_version !== undefined && typeof d.terraform_version !== 'string')
    return 'State terraform_version must be a string';
  const outputs = d.outputs ?? {};
  if (typeof outputs !== 'object' || outputs === null || Array.isArray(outputs))
    return 'State outputs must be an object';
  const resources = d.resources ?? [];
  if (!Array.isArray(resources)) return 'State resources must be a list';
  for (const r of resources as unknown[]) {
    const res = r as Partial<StateResource> | null;
    if (
      typeof res !== 'object' ||
      res === null ||
      typeof res.mode !== 'string' ||
      typeof res.type !== 'string' ||
      typeof res.name !== 'string' ||
      typeof res.provider !== 'string' ||
      !Array.isArray(res.instances) ||
      (res.module !== undefined && typeof res.module !== 'string')
    ) {
      return 'State resources must each have mode, type, name, provider and instances';
    }
  }
  return {
    version: STATE_FORMAT_VERSION,
    terraformVersion: (d.terraform_version as string | undefined) ?? '',
    serial: d.serial as number,
    lineage: (d.lineage as string | undefined) ?? null,
    outputs: outputs as Record<string, StateOutput>,
    resources: resources as StateResource[],
  };
}

export interface DerivedResource {
  name: string;
  type: string;
  count: number;
  module: string;
  provider: string;
}

export interface DerivedState {
  resources: DerivedResource[];
  modules: Record<string, Record<string, number>>;
  providers: Record<string, Record<string, number>>;
  /** Instances of managed resources: what the workspace "manages" (data sources read, not manage). */
  resourceCount: number;
}

/**
 * The attributes the real service extracts after an upload. As in the real samples, data sources
 * are typed `data.<type>` and the root module is named `root`; counts are instances.
 */
export function deriveState(state: StateFile): DerivedState {
  const resources: DerivedResource[] = [];
  const modules: Record<string, Record<string, number>> = {};
  const providers: Record<string, Record<string, number>> = {};
  let resourceCount = 0;
  for (const r of state.resources) {
    const type = r.mode === 'data' ? `data.${r.type}` : r.type;
    const module = r.module ?? 'root';
    const count = r.instances.length;
    resources.push({ name: r.name, type, count, module, provider: r.provider });
    const byModule = (modules[module] ??= {});
    byModule[type] = (byModule[type] ?? 0) + count;
    const byProvider = (providers[r.provider] ??= {});
    byProvider[type] = (byProvider[type] ?? 0) + count;
    if (r.mode === 'managed') resourceCount += count;
  }
  return { resources, modules, providers, resourceCount };
}

/**
 * The `type` attribute of a state version output: the engine's type name for primitives, `array` for
 * lists, tuples and sets, `object` for maps and objects (`detailed-type` carries the full type).
 */
export function outputTypeName(type: unknown): string {
  if (typeof type === 'string') return type === 'bool' ? 'boolean' : type;
  if (Array.isArray(type) && typeof type[0] === 'string') {
    return ['list', 'tuple', 'set'].includes(type[0]) ? 'array' : 'object';
  }
  return 'string';
}
