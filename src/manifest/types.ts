/**
 * What the manifest layer hands to the rest of Converge: validated, interpolated resources that
 * remember where in which file they came from, so that any later layer (a plan-time check, an
 * apply error) can point the user at `file:line:col`.
 */

import { printable } from '../common/printable.js';
import { formatPosition, type ServiceName, type SourcePosition } from '../common/types.js';
import type { ManifestFileReader } from './confined-files.js';

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

/** One validated resource of the manifest. */
export interface ManifestResource {
  kind: string;
  name: string;
  namespace?: string;
  connection?: string;
  /** `metadata.labels`, when the document has them. */
  labels?: Record<string, string>;
  /** `metadata.ensure: absent`: the manifest asks for the object to be deleted. */
  ensure?: 'absent';
  /** The interpolated `spec`, validated against the kind's schema (defaults applied). */
  spec: Record<string, unknown>;
  /** Where the document starts (its `kind:` line). */
  source: SourcePosition;
  /**
   * Position of a value inside this document, by JSON pointer relative to the document root
   * (`/spec/Policies/1/Name`). Falls back to the nearest existing parent, then to `source`.
   */
  locate(pointer: string): SourcePosition;
  /**
   * JSON pointers (relative to the document root) of values that came from interpolation
   * (`${env:...}`, `${file:...}`). The manifest layer records every interpolated value, not only
   * ones that look secret: guessing from names would miss some, and the kinds know which fields
   * really are secret. The manifest layer never quotes them in its own error messages; plans show
   * them unless the kind declares the attribute `sensitive` or `writeOnly`, as terraform shows a
   * variable's value unless the variable is marked sensitive.
   */
  sensitivePointers: ReadonlySet<string>;
  /**
   * Reads a file this document names (a job's `specFile`, a workspace's state file), relative to the
   * manifest file, with the rules of `${file:}`: only inside the manifest root once symbolic links are
   * resolved, never Converge's state folder, at most `maxBytes`. Kinds read local files only this way.
   */
  readFile: ManifestFileReader;
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
  caCertificate?: string;
  insecureSkipTlsVerify?: boolean;
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
  source: SourcePosition;
}

export interface Manifest {
  /** Every file that was read, in the order read. */
  files: string[];
  resources: ManifestResource[];
  connections: ManifestConnection[];
  pruneScopes: ManifestPruneScope[];
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
export class ManifestError extends Error {
  readonly problems: ManifestProblem[];
  constructor(problems: ManifestProblem[]) {
    super(problems.map((p) => printable(`${formatPosition(p.position)}: ${p.message}`)).join('\n'));
    this.name = 'ManifestError';
    this.problems = problems;
  }
}
