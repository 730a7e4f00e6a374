/** `converge state push|pull|list|show`: a workspace's state versions. */
import { jsonOut } from '../../common/printable.js';
import { describeFsError, describeFsWriteError } from '../../common/text-file.js';
import { randomBytes } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { copyFile, link, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { HttpStatusError } from '../../clients/http/errors.js';
import { parseStateFile } from '../../clients/workspaces/state-file.js';
import { currentIfThis, pushState, WorkspaceUnlockError } from '../../clients/workspaces/state-push.js';
import { workspacesService } from '../../clients/workspaces/definition.js';
import { withClient } from '../service-client.js';
import { CliError, EXIT } from '../exit-codes.js';
import { onInterrupt } from '../interrupt.js';
import { type Io, write } from '../io.js';
import { table } from '../table.js';
import { describeRef, parseWorkspaceRef, workspaceId } from '../workspace-ref.js';

/**
 * State may hold secrets: the file is written readable by its owner only, also when it replaces an
 * existing file (writeFile's mode applies only to new files), through a temp file and a rename.
 */
async function writePrivately(file: string, text: string, replace: boolean): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(tmp, text, { mode: 0o600 });
    if (replace) await rename(tmp, file);
    else await placeNew(tmp, file);
  } catch (error) {
    await unlink(tmp).catch(() => {});
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(
      code === 'EEXIST'
        ? `${file} exists: pull to another file, or pass --force to replace it`
        : `cannot write ${file}: ${describeFsWriteError(error)}`,
    );
  }
}

/**
 * Puts the finished temp file at `file`, which must not exist: a hard link fails if one appeared
 * meanwhile, where a rename would replace it. A file system without hard links (FAT, some network
 * shares) gets an exclusive copy instead.
 */
async function placeNew(tmp: string, file: string): Promise<void> {
  try {
    await link(tmp, file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') throw error;
    await copyFile(tmp, file, constants.COPYFILE_EXCL);
  }
  await unlink(tmp);
}

/**
 * A 409 on the upload means the service refused the file against the workspace's history (another
 * lineage, a serial not greater than the current one), or, rarely, that the lock was taken away
 * meanwhile. The service's own text may speak of its wire attribute ("send force"); this names the
 * flag that sends it.
 */
function withForceHint(error: unknown, file: string): unknown {
  if (!(error instanceof HttpStatusError) || error.status !== 409) return error;
  return new CliError(
    `${error.message}\nIf ${file} should replace the workspace's state anyway (another lineage, or a serial not newer than the current one), run again with --force.`,
  );
}

export async function statePushCommand(
  arg: string,
  file: string,
  io: Io,
  flags: { force?: boolean } = {},
): Promise<number> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${describeFsError(error)}`);
  }
  const info = (() => {
    try {
      return parseStateFile(text, file);
    } catch (error) {
      throw new CliError((error as Error).message);
    }
  })();
  const interrupt = onInterrupt(io);
  try {
    return await withClient(io, workspacesService, async (client) => {
      const ref = parseWorkspaceRef(arg, client.defaultOrganization);
      const id = await workspaceId(client, ref);
      // Locks, uploads and unlocks: the unlock runs on every path, Ctrl-C included.
      let locked = false;
      const sv = await pushState(client, id, info, {
        signal: interrupt.signal,
        onLocked: () => (locked = true),
        reason: `converge state push ${file}`,
        ...(flags.force ? { force: true } : {}),
      }).catch(async (error: unknown) => {
        // Refused as not newer because it is the current state already (a CI job run again):
        // nothing to push, not a case for --force.
        if (!interrupt.signal.aborted && error instanceof HttpStatusError && error.status === 409) {
          const current = await currentIfThis(client, id, info);
          if (current) return { already: current };
        }
        if (!interrupt.signal.aborted) throw flags.force ? error : withForceHint(error, file);
        // The upload may or may not have reached the service before it was cut off.
        // Exit 130 (143 for SIGTERM), as every other interrupted command: a script tells an
        // interruption from a failure by it.
        // Before the lock was taken, nothing was sent: saying a lock was released misled. An unlock
        // that failed says the lock stays, in its own words: "released" would be false.
        if (error instanceof WorkspaceUnlockError)
          throw new CliError(`interrupted, and ${error.message}`, interrupt.exitCode ?? EXIT.error);
        throw new CliError(
          locked
            ? `interrupted: the workspace lock was released; run \`converge state list ${describeRef(ref)}\` to see whether the upload arrived`
            : 'interrupted before the push began: nothing was uploaded, and the workspace was not locked',
          interrupt.exitCode ?? EXIT.error,
        );
      });
      if ('already' in sv) {
        write(
          io.stdout,
          `Nothing to push: ${file} is already the current state of ${describeRef(ref)} (state version ${sv.already.id}, serial ${info.serial}, same content).`,
        );
        return EXIT.ok;
      }
      write(
        io.stdout,
        `Pushed ${file} to ${describeRef(ref)}: state version ${sv.id} (serial ${info.serial}, lineage ${info.lineage}).`,
      );
      return EXIT.ok;
    });
  } finally {
    interrupt.dispose();
  }
}

export async function statePullCommand(
  arg: string,
  flags: { output?: string; force?: boolean },
  io: Io,
): Promise<number> {
  // A state file is not to be lost to a typo: the one about to be pushed, say. Checked before any
  // request, and again by the write itself.
  if (flags.output && !flags.force && existsSync(flags.output))
    throw new CliError(`${flags.output} exists: pull to another file, or pass --force to replace it`);
  return withClient(io, workspacesService, async (client, run) => {
    const ref = parseWorkspaceRef(arg, client.defaultOrganization);
    const id = await workspaceId(client, ref);
    const current = await client.currentStateVersion(id);
    if (!current) throw new CliError(`workspace ${describeRef(ref)} has no state yet`);
    const url = current.attributes['hosted-state-download-url'];
    if (typeof url !== 'string') throw new CliError(`state version ${current.id} has no download URL`);
    const raw = await client.downloadState(url);
    if (flags.output) {
      await writePrivately(flags.output, raw, Boolean(flags.force));
      write(
        io.stderr,
        `Wrote state version ${current.id} (serial ${current.attributes.serial}) to ${flags.output}.`,
      );
    } else {
      // The state's bytes as the service holds them: never masked (`-o FILE` writes them alike).
      run.rawStdout.write(raw);
    }
    return EXIT.ok;
  });
}

export async function stateListCommand(arg: string, flags: { json?: boolean }, io: Io): Promise<number> {
  return withClient(io, workspacesService, async (client) => {
    const ref = parseWorkspaceRef(arg, client.defaultOrganization);
    const named =
      'id' in ref
        ? await client.readWorkspace(ref).then((w) => {
            if (!w) throw new CliError(`workspace ${ref.id} not found (or this token may not read it)`);
            return { organization: w.organization, name: w.name };
          })
        : ref;
    // The service answers the list of a workspace that does not exist (or that this token may not
    // see) with a bare 404: said as pull and push say it, not as the request's encoded URL.
    const versions = await client.listStateVersions(named.organization, named.name).catch((error) => {
      if (error instanceof HttpStatusError && error.status === 404)
        throw new CliError(
          `workspace ${named.organization}/${named.name} not found (or this token may not read it)`,
        );
      throw error;
    });
    if (flags.json) {
      write(io.stdout, jsonOut(versions, null, 2));
    } else if (versions.length === 0) {
      write(io.stdout, `No state versions in ${describeRef(ref)}.`);
    } else {
      write(
        io.stdout,
        table(
          ['ID', 'SERIAL', 'RESOURCES', 'ENGINE', 'CREATED'],
          versions.map((v) => [
            v.id,
            String(v.attributes.serial ?? ''),
            String(
              Array.isArray(v.attributes.resources)
                ? (v.attributes.resources as { count?: number }[]).reduce((n, r) => n + (r.count ?? 0), 0)
                : '',
            ),
            String(v.attributes['engine-version'] ?? ''),
            String(v.attributes['created-at'] ?? ''),
          ]),
        ),
      );
    }
    return EXIT.ok;
  });
}

export async function stateShowCommand(id: string, flags: { json?: boolean }, io: Io): Promise<number> {
  return withClient(io, workspacesService, async (client) => {
    const found = await client.readStateVersion(id, { include: ['outputs'] });
    if (!found) throw new CliError(`state version ${id} not found (or this token may not read it)`);
    const { stateVersion: sv, included } = found;
    if (flags.json) {
      write(io.stdout, jsonOut({ ...sv, included }, null, 2));
      return EXIT.ok;
    }
    const a = sv.attributes;
    const resources =
      (a.resources as
        { type?: string; name?: string; count?: number; module?: string | null }[] | undefined) ?? [];
    const outputs = included.filter((r) => r.type === 'state-version-outputs');
    const lines = [
      `ID              ${sv.id}`,
      `Workspace       ${sv.workspaceId ?? ''}`,
      `Serial          ${String(a.serial ?? '')}`,
      `Engine version  ${String(a['engine-version'] ?? '')}`,
      `Created         ${String(a['created-at'] ?? '')}`,
      `Size            ${String(a.size ?? '')} bytes`,
      `Resources       ${resources.length === 0 ? 'none' : ''}`,
      ...resources.map((r) => `  ${r.module ? `${r.module}.` : ''}${r.type}.${r.name} ×${r.count ?? 1}`),
      `Outputs         ${outputs.length === 0 ? 'none' : ''}`,
      ...outputs.map((o) => {
        const attrs = (o.attributes ?? {}) as { name?: string; sensitive?: boolean; value?: unknown };
        return `  ${attrs.name} = ${attrs.sensitive ? '(sensitive value)' : JSON.stringify(attrs.value)}`;
      }),
    ];
    write(io.stdout, lines.join('\n'));
    return EXIT.ok;
  });
}
