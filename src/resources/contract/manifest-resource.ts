/**
 * What a kind sees of the manifest document an object came from: its identity, its interpolated
 * spec, where each value was written and a reader for the local files it names. It lives with the
 * kind contract, not in the manifest layer, so that kinds never import the manifest layer (which
 * sits above them); the manifest layer builds it.
 */
import type { ManifestFileReader } from '../../common/confined-files.js';
import type { SourcePosition } from '../../common/types.js';

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
