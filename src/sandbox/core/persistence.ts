/**
 * State files: one JSON file per service in the data folder (`registry.json`, ...). Writes are atomic:
 * the snapshot goes to a temp file in the same folder, is fsynced, then renamed over the old file (and
 * the folder fsynced), so a crash leaves either the old or the new file, never half of one. Saves are
 * debounced after each change and serialised; `close()` writes whatever is still pending.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

const FORMAT = 'converge-sandbox-state';
const FORMAT_VERSION = 1;

interface StateFileDocument {
  format: typeof FORMAT;
  version: number;
  service: string;
  savedAt: string;
  state: unknown;
}

export class StateFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StateFileError';
  }
}

export class JsonStateFile {
  readonly path: string;
  private readonly tempPrefix: string;

  constructor(
    readonly dir: string,
    readonly service: string,
  ) {
    this.path = join(dir, `${service}.json`);
    this.tempPrefix = `.${service}.json.`;
  }

  /** The saved state, or undefined when there is no file yet. A damaged file is an error, never ignored. */
  load(): unknown {
    this.removeStaleTempFiles();
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    let doc: Partial<StateFileDocument>;
    try {
      doc = JSON.parse(text) as Partial<StateFileDocument>;
    } catch (err) {
      throw new StateFileError(
        `${this.path}: not valid JSON (${(err as Error).message}); move it away to start empty`,
      );
    }
    if (doc?.format !== FORMAT || doc.service !== this.service) {
      throw new StateFileError(`${this.path}: not a sandbox state file for service '${this.service}'`);
    }
    if (doc.version !== FORMAT_VERSION) {
      throw new StateFileError(`${this.path}: state format version ${doc.version} is not supported`);
    }
    return doc.state;
  }

  async save(state: unknown): Promise<void> {
    const doc: StateFileDocument = {
      format: FORMAT,
      version: FORMAT_VERSION,
      service: this.service,
      savedAt: new Date().toISOString(),
      state,
    };
    await mkdir(this.dir, { recursive: true });
    const temp = join(this.dir, `${this.tempPrefix}${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      const handle = await open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(`${JSON.stringify(doc, null, 2)}\n`, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, this.path);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    syncDirectory(this.dir);
  }

  /** Temp files left by a crash between write and rename hold nothing the real file lacks. */
  private removeStaleTempFiles(): void {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith(this.tempPrefix) && name.endsWith('.tmp'))
        rmSync(join(this.dir, name), { force: true });
    }
  }
}

/** Makes the rename itself durable. Not every platform can open a folder; then the rename is as good as it gets. */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // e.g. Windows: folders cannot be opened for fsync.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export class StateSaver {
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;
  private chain: Promise<void> = Promise.resolve();
  private lastError: Error | undefined;

  constructor(
    private readonly file: JsonStateFile,
    private readonly snapshot: () => unknown,
    private readonly opts: { debounceMs: number; onError: (err: Error) => void },
  ) {}

  markDirty(): void {
    this.dirty = true;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.opts.debounceMs);
  }

  /** Writes the current state if it changed since the last save; saves never overlap. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (!this.dirty) return this.chain;
    this.dirty = false;
    const state = this.snapshot();
    this.chain = this.chain.then(() =>
      this.file.save(state).catch((err: Error) => {
        this.lastError = err;
        this.dirty = true; // try again on the next flush
        this.opts.onError(err);
      }),
    );
    return this.chain;
  }

  /** Final save; rejects when the state could not be written, so data loss is never silent. */
  async close(): Promise<void> {
    await this.flush();
    // A save that was already running may have failed meanwhile (it marks the state dirty): one more try.
    if (this.dirty) await this.flush();
    if (this.dirty) throw this.lastError ?? new Error(`${this.file.path}: state could not be saved`);
  }
}
