/**
 * The stores keep records in maps by ID; a read by name is a scan of the values (the sandbox holds a
 * few hundred records at most, so no second index is kept in step).
 */
export function findValue<T>(
  records: ReadonlyMap<string, T>,
  matches: (record: T) => boolean,
): T | undefined {
  for (const record of records.values()) if (matches(record)) return record;
  return undefined;
}
