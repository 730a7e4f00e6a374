/**
 * Checks a sandbox config value: first against the JSON schema (unknown keys, wrong types), then the
 * rules a schema cannot say (unique token names and secrets, each service's own checks such as seed
 * roles that link unknown policies). Every problem becomes one line naming where it is: `file:line:col`
 * when the config came from a file, else the path inside the config.
 */
import type { ErrorObject, Options, ValidateFunction } from 'ajv';
import { loadPrecompiled, newAjv, schemaKey } from '../../common/precompiled.js';
import type { AnyServiceDefinition, ServiceConfigIssue } from '../core/service.js';
import { buildConfigSchema } from './schema.js';
import type { SandboxConfig } from './types.js';
import { overfullFaultShares, overfullSharesMessage } from '../core/faults.js';

export type ConfigPath = (string | number)[];

/** Maps a path in the config to a 1-based position; `atKey` points at the key rather than its value. */
export type ConfigLocator = (path: ConfigPath, atKey: boolean) => { line: number; col: number } | undefined;

export interface ConfigProblem {
  /** `file:line:col`, or undefined for a config given as an object. */
  where?: string;
  path: ConfigPath;
  message: string;
}

export class SandboxConfigError extends Error {
  constructor(
    readonly problems: ConfigProblem[],
    readonly source?: string,
  ) {
    super(formatProblems(problems, source));
    this.name = 'SandboxConfigError';
  }
}

export function formatConfigPath(path: ConfigPath): string {
  let out = '';
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : out === '' ? seg : `.${seg}`;
  return out;
}

function formatProblems(problems: ConfigProblem[], source?: string): string {
  const lines = problems.map((p) => {
    const where = p.where ?? source ?? 'sandbox config';
    const path = formatConfigPath(p.path);
    return path === '' ? `${where}: ${p.message}` : `${where}: ${path}: ${p.message}`;
  });
  return lines.length === 1 ? lines[0]! : `invalid sandbox config:\n${lines.map((l) => `  ${l}`).join('\n')}`;
}

export interface ValidateOptions {
  services: readonly AnyServiceDefinition[];
  /** The file the value came from, for messages. */
  source?: string;
  locate?: ConfigLocator;
}

/** How the config schema is compiled, here and by the build (precompile.ts): one set of options. */
export const CONFIG_AJV_OPTIONS: Options = {
  allErrors: true,
  strict: true,
  verbose: true,
  allowUnionTypes: true,
};

const validators = new WeakMap<readonly AnyServiceDefinition[], ValidateFunction>();
/** The build's validator of the built-in services' config schema (scripts/build-validators.mjs). */
let generated: ReadonlyMap<string, ValidateFunction> | undefined;

function validatorFor(services: readonly AnyServiceDefinition[]): ValidateFunction {
  let validate = validators.get(services);
  if (!validate) {
    const schema = buildConfigSchema(services);
    generated ??= loadPrecompiled(new URL('./validators.generated.cjs', import.meta.url));
    // Another set of services (a test's, an extension's) misses and is compiled as before.
    validate = generated.get(schemaKey(schema)) ?? newAjv(CONFIG_AJV_OPTIONS).compile(schema);
    validators.set(services, validate);
  }
  return validate;
}

export function validateSandboxConfig(value: unknown, opts: ValidateOptions): SandboxConfig {
  const config = value ?? {};
  const issues: { path: ConfigPath; message: string; atKey: boolean }[] = [];

  const validate = validatorFor(opts.services);
  if (!validate(config)) {
    for (const err of validate.errors ?? []) issues.push(describeSchemaError(err));
  } else {
    const typed = config as SandboxConfig & Record<string, unknown>;
    issues.push(...checkTokens(typed).map((i) => ({ ...i, atKey: false })));
    issues.push(...checkFaults(typed).map((i) => ({ ...i, atKey: true })));
    for (const service of opts.services) {
      const section = typed[service.name];
      if (section !== undefined && service.checkConfig) {
        for (const issue of service.checkConfig(section as never)) {
          issues.push({ path: [service.name, ...issue.path], message: issue.message, atKey: false });
        }
      }
      if (!service.checkTokenRights) continue;
      typed.tokens?.forEach((token, i) => {
        const rights = (token as unknown as Record<string, unknown>)[service.name];
        if (rights === undefined) return;
        for (const issue of service.checkTokenRights!(rights, section as never)) {
          issues.push({
            path: ['tokens', i, service.name, ...issue.path],
            message: issue.message,
            atKey: false,
          });
        }
      });
    }
  }
  if (issues.length > 0) {
    const seen = new Set<string>();
    const problems: ConfigProblem[] = [];
    for (const issue of issues) {
      const key = `${formatConfigPath(issue.path)}|${issue.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const pos = opts.locate?.(issue.path, issue.atKey);
      problems.push({
        path: issue.path,
        message: issue.message,
        ...(pos && opts.source ? { where: `${opts.source}:${pos.line}:${pos.col}` } : {}),
      });
    }
    throw new SandboxConfigError(problems, opts.source);
  }
  return config as SandboxConfig;
}

function checkTokens(config: SandboxConfig): ServiceConfigIssue[] {
  const issues: ServiceConfigIssue[] = [];
  const byName = new Map<string, number>();
  const bySecret = new Map<string, number>();
  config.tokens?.forEach((token, i) => {
    const sameName = byName.get(token.name);
    if (sameName !== undefined)
      issues.push({
        path: ['tokens', i, 'name'],
        message: `duplicate token name (also tokens[${sameName}])`,
      });
    else byName.set(token.name, i);
    const sameSecret = bySecret.get(token.secret);
    if (sameSecret !== undefined) {
      issues.push({
        path: ['tokens', i, 'secret'],
        message: `duplicate token secret (also tokens[${sameSecret}])`,
      });
    } else bySecret.set(token.secret, i);
  });
  return issues;
}

/** `errorRate` is the older name of `failRate`: one scope may not give both (which would win is a guess). */
function checkFaults(config: SandboxConfig): ServiceConfigIssue[] {
  const faults = config.faults;
  if (!faults) return [];
  const scopes: [ConfigPath, object][] = [
    [['faults'], faults],
    ...Object.entries(faults.services ?? {}).map(([name, section]): [ConfigPath, object] => [
      ['faults', 'services', name],
      section,
    ]),
  ];
  const both = scopes
    .filter(([, section]) => 'failRate' in section && 'errorRate' in section)
    .map(([path]) => ({
      path: [...path, 'errorRate'],
      message: 'give failRate or its older name errorRate, not both',
    }));
  // A service's section is at fault only where it sets a rate itself (else the shared one is, and is
  // said once), and the problem points at the key the section sets.
  const overfull = overfullFaultShares(faults).flatMap((share) => {
    const path: ConfigPath = share.service === undefined ? ['faults'] : ['faults', 'services', share.service];
    const section = (share.service === undefined ? faults : faults.services?.[share.service]) ?? {};
    const set = (['resetRate', 'failRate', 'errorRate'] as const).find((k) => k in section);
    if (share.service !== undefined && set === undefined) return [];
    return [
      {
        path: [...path, set ?? 'resetRate'],
        message: overfullSharesMessage(share, { failRate: 'failRate', resetRate: 'resetRate' }),
      },
    ];
  });
  return [...both, ...overfull];
}

function describeSchemaError(err: ErrorObject): { path: ConfigPath; message: string; atKey: boolean } {
  const path: ConfigPath = err.instancePath
    .split('/')
    .slice(1)
    .map((seg) => seg.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((seg) => (/^\d+$/.test(seg) ? Number(seg) : seg));
  const params = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'additionalProperties': {
      const allowed = Object.keys(
        (err.parentSchema as { properties?: object } | undefined)?.properties ?? {},
      );
      return {
        path: [...path, String(params.additionalProperty)],
        message: `unknown key${allowed.length ? `; allowed here: ${allowed.join(', ')}` : ''}`,
        atKey: true,
      };
    }
    case 'required':
      return { path, message: `missing required key '${String(params.missingProperty)}'`, atKey: false };
    case 'type':
      return { path, message: `must be ${describeType(String(params.type))}`, atKey: false };
    case 'enum':
      return {
        path,
        message: `must be one of: ${(params.allowedValues as unknown[]).join(', ')}`,
        atKey: false,
      };
    case 'minimum':
    case 'maximum':
      return { path, message: `must be ${params.comparison} ${params.limit}`, atKey: false };
    case 'minLength':
      return {
        path,
        message: params.limit === 1 ? 'must not be empty' : `must be at least ${params.limit} characters`,
        atKey: false,
      };
    default:
      return { path, message: err.message ?? err.keyword, atKey: false };
  }
}

function describeType(type: string): string {
  // A key that takes two types (`rateLimit`: a number or a mapping) names both.
  if (type.includes(',')) return type.split(',').map(describeType).join(' or ');
  switch (type) {
    case 'object':
      return 'a mapping (key: value)';
    case 'array':
      return 'a list';
    case 'integer':
      return 'a whole number';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    default:
      return `a ${type}`;
  }
}
