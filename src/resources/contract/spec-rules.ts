/**
 * Implemented by a kind whose manifest rules JSON Schema says poorly (fields that exclude each
 * other). Checked when the manifest is validated, after the schema passed, without any service.
 */
export interface SpecRules<Spec = Record<string, unknown>> {
  /** The broken rules; pointers are relative to `spec` (`/operations`). */
  validateSpec(spec: Spec): { pointer: string; message: string }[];
  /**
   * Rules that check only what they find, whatever shape the spec has, so they also run when the
   * schema refuses the document: the slip they catch (a job's `KillTimeout: 5`) is said in the same
   * run as a misspelt field beside it, not only after that is fixed.
   */
  validateAnySpec?(spec: unknown): { pointer: string; message: string }[];
}

export function hasSpecRules<K extends object>(kind: K | undefined): kind is K & SpecRules {
  return typeof (kind as Partial<SpecRules> | undefined)?.validateSpec === 'function';
}
