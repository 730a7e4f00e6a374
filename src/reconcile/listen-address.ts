/**
 * `--listen` addresses as Go programs and Prometheus exporters write them: `127.0.0.1:9464`,
 * `[::1]:9464`, or `:9464` for every interface (what a container needs for its probes).
 */
export interface ListenAddress {
  host: string;
  port: number;
}

export function parseListenAddress(text: string): ListenAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]*)):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    throw new Error(`--listen must be HOST:PORT, [IPv6]:PORT or :PORT (like 127.0.0.1:9464), not "${text}"`);
  }
  const host = m[1] ?? (m[2] === '' ? '0.0.0.0' : m[2]!);
  return { host, port };
}
