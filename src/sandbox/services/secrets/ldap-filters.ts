/**
 * Text handling for the directory login, as Vault's LDAP method does it (hashicorp/cap `ldap/client.go`,
 * formerly vault `sdk/helper/ldaputil/client.go`):
 *
 * - `userfilter` and `groupfilter` are Go `text/template`s. No JavaScript library renders Go templates,
 *   and Vault exposes only plain fields (`UserAttr`, `Username`; `UserDN`, `Username`) with no function
 *   map, so this renders `{{.Field}}` actions (optional spaces and `-` trim markers) and rejects any
 *   other action with an error worded like Go's.
 * - Values going into a filter are escaped per RFC 4515 (ldapts `Filter.escape`: `*`, `(`, `)`, `\`, NUL).
 *   go-ldap's `EscapeFilter` also hex-escapes bytes above 0x7f; that is valid too, but ldapts' filter
 *   parser would decode such escapes as Latin-1, so non-ASCII stays raw UTF-8 here (also RFC 4515).
 * - Values going into a DN are escaped per RFC 4514 like Vault's `EscapeLDAPValue`.
 * - `getCN` takes the first CN of a DN, or returns the value as is when it is not a DN.
 */
import { Filter } from 'ldapts';

/** RFC 4515 escaping of a value placed in a search filter. */
export function escapeFilterValue(value: string): string {
  return Filter.escape(value);
}

/**
 * RFC 4514 escaping of an attribute value placed in a DN, byte for byte as Vault's `EscapeLDAPValue`
 * (including its quirk that `#` is escaped anywhere, not only in the first position).
 */
export function escapeDNValue(value: string): string {
  if (value === '') return '';
  const bytes = Buffer.from(value, 'utf8');
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    const char = String.fromCharCode(byte);
    if ((i === 0 && char === ' ') || char === '#') out += `\\${char}`;
    else if (i === bytes.length - 1 && char === ' ') out += `\\${char}`;
    else if ('"+,;<>\\'.includes(char)) out += `\\${char}`;
    else if (byte < 0x20 || byte > 0x7e) out += `\\${byte.toString(16).padStart(2, '0')}`;
    else out += char;
  }
  return out;
}

/** A template that is not of the supported `{{.Field}}` form, or names an unknown field. */
export class TemplateError extends Error {
  constructor(
    message: string,
    /** `compilation` for syntax Go's parser would refuse; `execution` for an unknown field. */
    readonly phase: 'compilation' | 'execution',
  ) {
    super(message);
    this.name = 'TemplateError';
  }
}

const TEMPLATE_NAME = 'queryTemplate';

/**
 * Renders a Go text/template restricted to `{{.Field}}` actions. `fields` values are inserted as
 * given (escape them first). Errors read like Go's, e.g. `template: queryTemplate:1: unclosed action`.
 */
export function renderGoTemplate(template: string, fields: Readonly<Record<string, string>>): string {
  let out = '';
  let pos = 0;
  while (pos < template.length) {
    const open = template.indexOf('{{', pos);
    if (open < 0) {
      out += template.slice(pos);
      break;
    }
    let text = template.slice(pos, open);
    const line = lineOf(template, open);
    const close = template.indexOf('}}', open + 2);
    if (close < 0)
      throw new TemplateError(`template: ${TEMPLATE_NAME}:${line}: unclosed action`, 'compilation');
    let inner = template.slice(open + 2, close);
    let next = close + 2;
    // Trim markers: "{{- " trims the whitespace before the action, " -}}" the whitespace after it.
    if (/^-\s/.test(inner)) {
      inner = inner.slice(1);
      text = text.replace(/\s+$/, '');
    }
    if (/\s-$/.test(inner)) {
      inner = inner.slice(0, -1);
      const after = /^\s*/.exec(template.slice(next))![0];
      next += after.length;
    }
    out += text;
    const action = inner.trim();
    const field = /^\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(action);
    if (!field) {
      const shown = action === '' ? 'missing value for command' : `unsupported action {{${action}}}`;
      throw new TemplateError(
        `template: ${TEMPLATE_NAME}:${line}: ${shown} (only {{.Field}} references are supported)`,
        'compilation',
      );
    }
    const name = field[1]!;
    if (!Object.hasOwn(fields, name)) {
      throw new TemplateError(
        `template: ${TEMPLATE_NAME}:${line}:${open - lineStart(template, open) + 3}: executing "${TEMPLATE_NAME}" at <.${name}>: ` +
          `can't evaluate field ${name} in type struct { ${Object.keys(fields)
            .map((k) => `${k} string`)
            .join('; ')} }`,
        'execution',
      );
    }
    out += fields[name]!;
    pos = next;
  }
  return out;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text[i] === '\n') line++;
  return line;
}

function lineStart(text: string, index: number): number {
  return text.lastIndexOf('\n', index - 1) + 1;
}

/** One `type=value` pair of a parsed DN (value unescaped). */
export interface DNAttribute {
  type: string;
  value: string;
}

/**
 * Parses an RFC 4514 DN into its RDNs (each a list of `type=value` pairs), or returns `undefined` when
 * the string is not a DN (go-ldap's `ParseDN` failing). An empty string is a DN with no RDNs.
 * Values are unescaped (`\,`, `\xx` hex pairs as UTF-8); a `#`-prefixed BER value is kept as written.
 */
export function parseDN(dn: string): DNAttribute[][] | undefined {
  const rdns: DNAttribute[][] = [];
  if (dn.trim() === '') return rdns;
  let rdn: DNAttribute[] = [];
  let i = 0;
  const n = dn.length;
  while (i < n) {
    while (i < n && dn[i] === ' ') i++;
    const eq = dn.indexOf('=', i);
    if (eq < 0) return undefined;
    const type = dn.slice(i, eq).trim();
    if (!/^([A-Za-z][A-Za-z0-9-]*|[0-9]+(\.[0-9]+)*)$/.test(type)) return undefined;
    i = eq + 1;
    const bytes: number[] = [];
    let trailingSpaces = 0;
    while (i < n && dn[i] === ' ') i++;
    while (i < n) {
      const c = dn[i]!;
      if (c === ',' || c === '+' || c === ';') break;
      if (c === '\\') {
        const hex = dn.slice(i + 1, i + 3);
        if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
          bytes.push(Number.parseInt(hex, 16));
          i += 3;
        } else if (i + 1 < n) {
          bytes.push(...Buffer.from(dn[i + 1]!, 'utf8'));
          i += 2;
        } else {
          return undefined;
        }
        trailingSpaces = 0;
        continue;
      }
      bytes.push(...Buffer.from(c, 'utf8'));
      trailingSpaces = c === ' ' ? trailingSpaces + 1 : 0;
      i++;
    }
    const value = Buffer.from(bytes.slice(0, bytes.length - trailingSpaces)).toString('utf8');
    rdn.push({ type, value });
    if (i >= n) break;
    const sep = dn[i];
    i++;
    if (sep !== '+') {
      rdns.push(rdn);
      rdn = [];
      if (i >= n) return undefined; // a DN may not end with a separator
    } else if (i >= n) {
      return undefined;
    }
  }
  if (rdn.length) rdns.push(rdn);
  return rdns;
}

/**
 * The group name Vault takes from a group attribute value or an entry DN: the first `CN` (compared
 * case-insensitively, as configurations written since Vault 1.11 do) of a DN, the whole value when it
 * is a DN without a CN, and the value itself when it is not a DN.
 */
export function getCN(value: string): string {
  const rdns = parseDN(value);
  if (!rdns || rdns.length === 0) return value;
  for (const rdn of rdns) for (const attr of rdn) if (attr.type.toLowerCase() === 'cn') return attr.value;
  return value;
}
