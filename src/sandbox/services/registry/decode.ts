/**
 * Decodes a role request body the way Go's encoding/json fills the real registry's `ACLRole`:
 * field names match case-insensitively, unknown fields (Hash, CreateIndex, ...) are ignored, `null`
 * leaves a field empty, and a value of the wrong type fails with Go's message. The HTTP layer prefixes
 * the message with "Role decoding failed: " and answers 400.
 */
import type { RoleInput } from './roles.js';

export interface DecodedRole extends RoleInput {
  /** Body `Namespace` (enterprise); undefined when absent or empty. */
  Namespace?: string;
}

class DecodeError extends Error {}

type FieldKind = 'string' | 'strings' | 'policies' | 'services' | 'nodes';

const ROLE_FIELDS: Record<string, FieldKind> = {
  ID: 'string',
  Name: 'string',
  Description: 'string',
  Namespace: 'string',
  Policies: 'policies',
  ServiceIdentities: 'services',
  NodeIdentities: 'nodes',
};

const GO_TYPES: Record<FieldKind, string> = {
  string: 'string',
  strings: '[]string',
  policies: '[]structs.ACLRolePolicyLink',
  services: 'structs.ACLServiceIdentities',
  nodes: 'structs.ACLNodeIdentities',
};

/** Returns the decoded role, or throws Error whose message is the Go-style decoding error. */
export function decodeRoleBody(text: string): DecodedRole {
  if (text.trim() === '') throw new Error('EOF');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // UNCONFIRMED wording: Go says e.g. "invalid character 'x' looking for beginning of value".
    throw new Error(`invalid JSON: ${(err as Error).message}`);
  }
  const role: DecodedRole = {
    ID: '',
    Name: '',
    Description: '',
    Policies: [],
    ServiceIdentities: [],
    NodeIdentities: [],
  };
  if (value === null) return role;
  if (!isObject(value))
    throw new Error(`json: cannot unmarshal ${jsonType(value)} into Go value of type structs.ACLRole`);

  try {
    for (const [field, raw] of fieldsOf(value, Object.keys(ROLE_FIELDS))) {
      if (raw === null) continue;
      const path = `ACLRole.${field}`;
      switch (ROLE_FIELDS[field]) {
        case 'string': {
          const text = expectString(raw, path);
          if (field === 'Namespace') {
            if (text !== '') role.Namespace = text;
          } else {
            role[field as 'ID' | 'Name' | 'Description'] = text;
          }
          break;
        }
        case 'policies':
          role.Policies = expectArray(raw, path, 'policies').map((item) =>
            stringStruct(item, path, 'structs.ACLRolePolicyLink', { ID: '', Name: '' }),
          );
          break;
        case 'services':
          role.ServiceIdentities = expectArray(raw, path, 'services').map((item) => {
            const s = expectObject(item, path, 'structs.ACLServiceIdentity');
            const out = { ServiceName: '', Datacenters: [] as string[] };
            for (const [k, v] of fieldsOf(s, ['ServiceName', 'Datacenters'])) {
              if (v === null) continue;
              if (k === 'ServiceName') out.ServiceName = expectString(v, `${path}.ServiceName`);
              else
                out.Datacenters = expectArray(v, `${path}.Datacenters`, 'strings').map((d) =>
                  expectString(d, `${path}.Datacenters`),
                );
            }
            return out;
          });
          break;
        case 'nodes':
          role.NodeIdentities = expectArray(raw, path, 'nodes').map((item) =>
            stringStruct(item, path, 'structs.ACLNodeIdentity', { NodeName: '', Datacenter: '' }),
          );
          break;
      }
    }
  } catch (err) {
    if (err instanceof DecodeError) throw new Error(err.message);
    throw err;
  }
  return role;
}

/**
 * The object's entries mapped onto known field names, exact match first, else case-insensitive (as Go
 * does); when several keys map to one field the last one in the document wins, also as in Go.
 */
function fieldsOf(obj: Record<string, unknown>, fields: string[]): [string, unknown][] {
  const out = new Map<string, unknown>();
  for (const [key, value] of Object.entries(obj)) {
    const field = fields.includes(key) ? key : fields.find((f) => f.toLowerCase() === key.toLowerCase());
    if (field !== undefined) out.set(field, value);
  }
  return [...out.entries()];
}

function mismatch(value: unknown, path: string, goType: string): DecodeError {
  return new DecodeError(
    `json: cannot unmarshal ${jsonType(value)} into Go struct field ${path} of type ${goType}`,
  );
}

function expectString(value: unknown, path: string): string {
  if (typeof value !== 'string') throw mismatch(value, path, 'string');
  return value;
}

function expectArray(value: unknown, path: string, kind: FieldKind): unknown[] {
  if (!Array.isArray(value)) throw mismatch(value, path, GO_TYPES[kind]);
  return value;
}

function expectObject(value: unknown, path: string, goType: string): Record<string, unknown> {
  if (value === null) return {};
  if (!isObject(value)) throw mismatch(value, path, goType);
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function jsonType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'boolean') return 'bool';
  return typeof value; // string, number, object
}

/**
 * A Go struct of string fields only (a policy link, a node identity): each field of `empty` read as a
 * string where given (null keeps the zero value), the field names matched as Go's decoder does.
 */
function stringStruct<T extends Record<string, string>>(
  item: unknown,
  path: string,
  goType: string,
  empty: T,
): T {
  const struct = expectObject(item, path, goType);
  const out: Record<string, string> = { ...empty };
  for (const [k, v] of fieldsOf(struct, Object.keys(empty))) {
    if (v !== null) out[k] = expectString(v, `${path}.${k}`);
  }
  return out as T;
}
