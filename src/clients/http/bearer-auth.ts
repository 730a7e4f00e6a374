/** The usual token header, apart from the HTTP client so a service definition can name it cheaply. */
export function bearerAuth(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}
