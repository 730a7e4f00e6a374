/**
 * The one check of an address the operator allows a manifest's Connections to send to
 * (`CONVERGE_ALLOW_ADDRESSES`, `--allow-address`), apart from the allow list itself (allow-list.ts)
 * so that the CLI refuses a flag's value as it parses it without loading the glob matcher.
 */

/** Why such an address is refused, said after what it carries. */
const WHY =
  ": an allowed address is matched against a Connection's scheme, host, port and path only, so this " +
  'one would allow nothing, and allowed addresses are printed again (the commands Converge suggests ' +
  'repeat --allow-address). Allow the address without them';

/**
 * Why an address the operator allows (`CONVERGE_ALLOW_ADDRESSES`, `--allow-address`) cannot be one:
 * it carries credentials (`https://user:password@host`), a query string (`?token=…`) or a fragment.
 * It is compared with a Connection's address, normalised to scheme, host, port and path, which
 * never holds any of them (a Connection's own address may carry none), so it would match nothing; and the
 * allowed addresses are repeated in the commands Converge suggests (`Apply exactly this plan with:
 * converge apply FILE --allow-address …`), which would print the secret. Undefined when it is fine.
 * The reason never quotes the address.
 *
 * The pattern is a glob, so it is read as a URL parser would read it where it can and by its text
 * where it cannot (`https://u:p@*.corp.example`, `user:pw@vault:8200` without a scheme): a `\` is a
 * `/` (as in an http URL), the host is the first part after `scheme:` and its slashes, and `?` alone
 * is a glob's one character (`https://node?.corp.example`), a query string only where a `name=` or a
 * `&` follows it before the next `/`.
 */
export function allowedAddressProblem(pattern: string): string | undefined {
  const text = pattern.replace(/\\/g, '/');
  const parts = text.split(/\/+/);
  const host = /^[^@]*:$/.test(parts[0] ?? '') ? (parts[1] ?? '') : (parts[0] ?? '');
  if (host.includes('@') || withUserinfo(pattern))
    return `carries credentials (user:password@ before the host)${WHY}; a Connection's token goes in its \`token:\` field`;
  if (/\?[^/]*[=&]/.test(text) || text.includes('#'))
    return `carries a query string or a fragment (?name=value, #…), which may hold a token${WHY}`;
  return undefined;
}

/** Whether a URL parser finds a user name or password in `pattern` (`https:///user:pw@host` too). */
function withUserinfo(pattern: string): boolean {
  try {
    const url = new URL(pattern);
    return url.username !== '' || url.password !== '';
  } catch {
    return false;
  }
}
