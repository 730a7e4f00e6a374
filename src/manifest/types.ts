/**
 * What the manifest layer hands to the rest of Converge: validated, interpolated resources that
 * remember where in which file they came from, so that any later layer (a plan-time check, an
 * apply error) can point the user at `file:line:col`.
 */

import { printable } from '../common/printable.js';
import { formatPosition, type ServiceName, type SourcePosition } from '../common/types.js';
import type { ResourceKey } from '../resources/contract/core.js';
import type { ManifestResource } from '../resources/contract/manifest-resource.js';

export { formatPosition, type ServiceName, type SourcePosition };

export interface ManifestMetadata {
  /** The object's key in its service (role Name, workspace name, ...). */
  name: string;
  /** Where the service has namespaces (registry namespace, workspace organization). */
  namespace?: string;
  /** Name of a `Connection` document to use instead of the environment's default for the service. */
  connection?: string;
  /** Free-form labels; they never reach a service. */
  labels?: Record<string, string>;
  /** `absent` asks for the object to be deleted. */
  ensure?: 'present' | 'absent';
}

/** A named connection declared in the manifest (`kind: Connection`). */
export interface ManifestConnection {
  name: string;
  service: ServiceName;
  address: string;
  /** Where the address is written, for errors about it. */
  addressPosition?: SourcePosition;
  token?: string;
  /**
   * The token came from outside the manifest (`${env:…}` or `${file:…}`), not written in it: it may
   * be the operator's credential, so it goes only to an address the operator configured or allowed.
   */
  tokenFromOutside?: boolean;
  /**
   * A setting of the service's (`organization`) read from outside the manifest: it goes into the
   * requests, so, like an object's such value, only to an address the operator chose.
   */
  settingFromOutside?: { key: string; position: SourcePosition };
  /**
   * The address, or part of it, was read from outside the manifest: it may hold a secret, so it is
   * never quoted, and it needs an address the operator chose like anything else carried out.
   */
  addressFromOutside?: boolean;
  caCertificate?: string;
  insecureSkipTlsVerify?: boolean;
  /**
   * Where the manifest sets whom the Connection trusts (`caCertificate`, or `insecureSkipTlsVerify:
   * true`): a Connection that carries what came from outside may not (connection-addresses.ts).
   */
  trustPosition?: { field: 'caCertificate' | 'insecureSkipTlsVerify'; position: SourcePosition };
  /** The service's own settings (a workspace connection's `organization`), by key. */
  settings: Record<string, string>;
  source: SourcePosition;
}

/** A scope in which `--prune` may delete objects the manifest no longer declares (`kind: PruneScope`). */
export interface ManifestPruneScope {
  name: string;
  /** The resource kind the scope covers. */
  kind: string;
  namespace?: string;
  connection?: string;
  /** Only objects whose names start with this. */
  namePrefix?: string;
  /** Allow pruning every object of the scope when the manifest declares none in it. */
  allowEmpty?: boolean;
  /** A field sent in the prune's requests (`namespace`, `namePrefix`) read from outside the manifest. */
  valueFromOutside?: { key: string; position: SourcePosition };
  source: SourcePosition;
}

export interface Manifest {
  /** Every file that was read, in the order read. */
  files: string[];
  resources: ManifestResource[];
  connections: ManifestConnection[];
  pruneScopes: ManifestPruneScope[];
  /**
   * Values the manifest read from sensitive variables (`CONVERGE_SENSITIVE_ENV`): secrets wherever
   * they are copied, as a kind's secret attributes are. In memory only, never written out.
   */
  sensitiveValues?: string[];
  /**
   * Objects of documents that have problems, as far as their kind and metadata say who they are:
   * checked for duplicates with the rest, so that a copied document with a typo in its spec is
   * reported as declared twice in the same run, not only once the typo is fixed. Only ever set on
   * a manifest that failed to load (a `ManifestError`'s).
   */
  unloaded?: {
    key: ResourceKey;
    source: SourcePosition;
    /** Where `metadata.connection` is written, when the document names one (checked as declared). */
    connectionAt?: SourcePosition;
  }[];
}

/** A problem with the manifest, always tied to a place in a file. */
export interface ManifestProblem {
  position: SourcePosition;
  message: string;
}

/**
 * Thrown by the manifest layer with every problem found, not only the first. One line per problem,
 * each made printable: a message may quote a key, a value or a file name from a manifest anyone
 * may have written, and a control character in one must not start a line of its own (a CI command)
 * or rewrite the terminal.
 */
/** How many of a manifest's problems an error message lists. */
export const MAX_PROBLEMS_SHOWN = 200;

export class ManifestError extends Error {
  readonly problems: ManifestProblem[];
  /**
   * What loaded despite the problems (the documents without any), when the error comes from loading:
   * the checks that need whole documents (two documents for one object) run on it too, so that one
   * run reports every problem rather than the next only once these are fixed.
   */
  readonly partial: Manifest | undefined;
  constructor(problems: ManifestProblem[], partial?: Manifest) {
    // The first MAX_PROBLEMS_SHOWN: a file of 100,000 empty documents printed 100,000 lines into a
    // CI log, where the first few say what is wrong. `problems` keeps them all (--json).
    const shown = problems
      .slice(0, MAX_PROBLEMS_SHOWN)
      .map((p) => printable(`${formatPosition(p.position)}: ${p.message}`));
    const more = problems.length - shown.length;
    if (more > 0)
      shown.push(`… and ${more} more problem${more === 1 ? '' : 's'}, not shown; fix these first`);
    super(shown.join('\n'));
    this.name = 'ManifestError';
    this.problems = problems;
    this.partial = partial;
  }
}
