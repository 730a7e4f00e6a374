/**
 * Reads a file that must be text: bounded in size (stat first, so a 50 MB file is refused without
 * reading it), a regular file, UTF-8, without NUL bytes. Shared by manifest loading and by
 * `${file:...}` interpolation so both refuse the same things with the same words.
 */
import { open, stat } from 'node:fs/promises';

export type TextFileResult = { ok: true; text: string } | { ok: false; reason: string };

// `fatal` turns invalid UTF-8 into an exception instead of U+FFFD; `ignoreBOM` keeps a BOM as a
// character so `${file:...}` returns the file byte for byte (yaml skips a leading BOM itself).
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export async function readTextFile(absolutePath: string, maxBytes: number): Promise<TextFileResult> {
  // Stat the path before opening it: opening a FIFO would block until something writes to it.
  let size: number;
  try {
    const stats = await stat(absolutePath);
    if (stats.isDirectory()) return { ok: false, reason: 'is a folder, not a file' };
    if (!stats.isFile()) return { ok: false, reason: 'is not a regular file' };
    if (stats.size > maxBytes) {
      return { ok: false, reason: `is ${formatBytes(stats.size)}, over the ${formatBytes(maxBytes)} limit` };
    }
    size = stats.size;
  } catch (error) {
    return { ok: false, reason: describeFsError(error) };
  }
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(absolutePath, 'r');
  } catch (error) {
    return { ok: false, reason: describeFsError(error) };
  }
  try {
    // Room for one byte more than `stat` said, to notice a file that grew in the meantime.
    const buffer = Buffer.alloc(size + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > size) return { ok: false, reason: 'changed while it was being read' };
    const bytes = buffer.subarray(0, length);
    const text = decodeText(bytes);
    if (text === undefined) return { ok: false, reason: 'is not a text file (NUL bytes or invalid UTF-8)' };
    return { ok: true, text };
  } catch (error) {
    return { ok: false, reason: describeFsError(error) };
  } finally {
    await handle.close();
  }
}

/** The text of `bytes`, or undefined when they are not UTF-8 text (NUL bytes, invalid sequences). */
export function decodeText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

export function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'not found';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a folder, not a file';
    case 'ENOTDIR':
      return 'not found (a parent is not a folder)';
    case 'ELOOP':
      return 'has too many levels of symbolic links';
    default:
      return code ? `cannot be read (${code})` : `cannot be read (${String(error)})`;
  }
}

/** A write's failure in words, as describeFsError says a read's. */
export function describeFsWriteError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return (code && WRITE_ERRORS[code]) ?? (code ? `failed (${code})` : String(error));
}

const WRITE_ERRORS: Record<string, string> = {
  ENOENT: 'its folder does not exist',
  ENOTDIR: 'a part of its path is not a folder',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a folder',
  ENOSPC: 'no space left on the device',
  EROFS: 'the file system is read-only',
  EDQUOT: 'the disk quota is exceeded',
};

const MiB = 1024 * 1024;

/** Limits read best in MiB; sizes near a limit need the exact count ("1048577 bytes", not "1 MiB"). */
export function formatBytes(bytes: number): string {
  if (bytes % MiB === 0 && bytes > 0) return `${bytes / MiB} MiB`;
  return bytes >= 10 * MiB ? `${(bytes / MiB).toFixed(1)} MiB` : `${bytes} bytes`;
}
