/**
 * A throwaway service, written the way a real one is added: a sandbox module, a client definition,
 * a kind and a CLI module, all in this file, and none of Converge's shared files touched. Notes have
 * a text, tags, a write-only `Secret` (accepted, never returned) and a nested sensitive `Auth.ApiKey`
 * (returned, but never to be shown). The sandbox refuses a note whose text is `fail`, echoing the
 * secret back in its error as careless services do, so tests can check that errors are scrubbed.
 */
import { Type } from '@sinclair/typebox';
import type { CliServiceModule } from '../../src/cli/service-module.js';
import { HttpClient } from '../../src/clients/http/client.js';
import { defineService as defineClientService, type ServiceDefinition } from '../../src/clients/service.js';
import { jsonResponse, type SandboxRequest } from '../../src/sandbox/core/http.js';
import { defineService as defineSandboxService } from '../../src/sandbox/core/service.js';
import { compact, diffValues } from '../../src/resources/compare.js';
import type {
  Observed,
  Prunable,
  RenderDetails,
  ResourceKind,
  SensitiveAttributes,
  WriteOnlyAttributes,
} from '../../src/resources/contract.js';

interface StoredNote {
  Name: string;
  Text: string;
  Tags?: string[];
  Auth?: { User: string; ApiKey?: string };
  Owner?: string;
  ModifyIndex: number;
}

/** What the sandbox saw, for tests: every write's body (secrets included, it is the service). */
export const notesWrites: Record<string, unknown>[] = [];

export const notesSandbox = defineSandboxService<undefined>({
  name: 'notes',
  pathPrefixes: ['/v1/notes'],
  errorResponse: (status, message) => jsonResponse(status, { error: message }),
  create(ctx, router) {
    const notes = new Map<string, StoredNote & { Secret?: string }>();
    let index = 0;
    const authorised = (req: SandboxRequest) => {
      const token = ctx.tokens.lookup(req.header('x-notes-token') ?? '');
      return token !== undefined;
    };
    const visible = ({ Secret: _secret, ...note }: StoredNote & { Secret?: string }) => note;
    const guard =
      (
        handler: (
          req: SandboxRequest,
        ) => Promise<ReturnType<typeof jsonResponse>> | ReturnType<typeof jsonResponse>,
      ) =>
      (req: SandboxRequest) =>
        authorised(req) ? handler(req) : jsonResponse(403, { error: 'permission denied' });
    router.add('/v1/notes', { GET: guard(() => jsonResponse(200, [...notes.values()].map(visible))) });
    router.add('/v1/notes/:name', {
      GET: guard((req) => {
        const note = notes.get(req.params.name!);
        return note ? jsonResponse(200, visible(note)) : jsonResponse(404, { error: 'no such note' });
      }),
      PUT: guard(async (req) => {
        const body = JSON.parse(await req.text()) as Omit<StoredNote, 'ModifyIndex'> & { Secret?: string };
        notesWrites.push(body);
        if (body.Text === 'fail') {
          return jsonResponse(400, {
            error: `refused a note with secret ${body.Secret ?? ''} and key ${body.Auth?.ApiKey ?? ''}`,
          });
        }
        const previous = notes.get(req.params.name!);
        const note = { ...body, Name: req.params.name!, ModifyIndex: ++index };
        // Like a real service, an omitted secret keeps the one already set.
        if (body.Secret === undefined && previous?.Secret !== undefined) note.Secret = previous.Secret;
        notes.set(note.Name, note);
        ctx.markDirty();
        return jsonResponse(200, visible(note));
      }),
      DELETE: guard((req) => {
        notes.delete(req.params.name!);
        return jsonResponse(200, true);
      }),
    });
    return { snapshot: () => [...notes.values()] };
  },
});

export class NotesClient {
  constructor(readonly http: HttpClient) {}
  get requestCount(): number {
    return this.http.requestCount;
  }
  close(): Promise<void> {
    return this.http.close();
  }
  async list(): Promise<StoredNote[]> {
    return (await this.http.requestJson<StoredNote[]>({ method: 'GET', path: '/v1/notes' })).body ?? [];
  }
  async read(name: string): Promise<StoredNote | undefined> {
    const res = await this.http.requestJson<StoredNote>({
      method: 'GET',
      path: `/v1/notes/${encodeURIComponent(name)}`,
      okStatuses: [404],
    });
    return res.status === 404 ? undefined : res.body;
  }
  async write(name: string, body: Record<string, unknown>): Promise<StoredNote> {
    const res = await this.http.requestJson<StoredNote>({
      method: 'PUT',
      path: `/v1/notes/${encodeURIComponent(name)}`,
      body,
    });
    return res.body!;
  }
  async remove(name: string): Promise<void> {
    await this.http.request({ method: 'DELETE', path: `/v1/notes/${encodeURIComponent(name)}` });
  }
}

export const notesService: ServiceDefinition<NotesClient> = defineClientService<NotesClient>({
  name: 'notes',
  description: 'notes (a service for tests)',
  authHeaders: (token) => ({ 'x-notes-token': token }),
  createClient: (c) =>
    new NotesClient(
      new HttpClient({
        service: 'notes',
        baseUrl: c.address,
        ...(c.token ? { token: c.token } : {}),
        authHeaders: (token) => ({ 'x-notes-token': token }),
        addressSource: c.addressSource,
        ...c.http,
      }),
    ),
});

const NoteSpec = Type.Object(
  {
    Text: Type.String(),
    Tags: Type.Optional(Type.Array(Type.String())),
    Secret: Type.Optional(Type.String({ minLength: 3 })),
    Auth: Type.Optional(
      Type.Object(
        { User: Type.String(), ApiKey: Type.Optional(Type.String()) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
type NoteSpecT = { Text: string; Tags?: string[]; Secret?: string; Auth?: { User: string; ApiKey?: string } };

const observed = (name: string, note: StoredNote): Observed<StoredNote> => ({
  key: { kind: 'Note', name },
  id: note.Name,
  live: note,
  version: note.ModifyIndex,
});

const shape = (spec: Omit<NoteSpecT, 'Secret'>) =>
  compact({ Text: spec.Text, Tags: [...(spec.Tags ?? [])].sort(), Auth: spec.Auth });

export const noteKind: ResourceKind<NoteSpecT, StoredNote> &
  WriteOnlyAttributes &
  SensitiveAttributes &
  RenderDetails<NoteSpecT, StoredNote> &
  Prunable<StoredNote> = {
  kind: 'Note',
  service: 'notes',
  description: 'A note (a kind for tests).',
  nameSchema: Type.String({ pattern: '^[a-z0-9-]+$' }),
  specSchema: NoteSpec,
  writeOnly: ['Secret'],
  sensitive: ['Auth.ApiKey'],
  ownership: 'marker',
  owns: (o) => o.live.Owner === 'converge',
  async observe(ctx, key) {
    const note = await ctx.client(notesService, key.connection).read(key.name);
    return note ? { ...observed(key.name, note), key } : undefined;
  },
  async list(ctx, scope) {
    return (await ctx.client(notesService, scope.connection).list()).map((n) => observed(n.Name, n));
  },
  // Deliberately naive about Secret (it compares the whole spec): the planner must keep the
  // write-only attribute out of the comparison.
  compare: (desired, o) => ({ diffs: diffValues(shape(desired.spec), shape(o.live)) }),
  render: (desired) => ({
    ...shape(desired.spec),
    ...(desired.spec.Secret ? { Secret: desired.spec.Secret } : {}),
  }),
  describe: (o) => shape(o.live),
  async create(ctx, desired) {
    const note = await ctx
      .client(notesService)
      .write(desired.key.name, { ...desired.spec, Owner: 'converge' });
    return observed(desired.key.name, note);
  },
  async update(ctx, desired) {
    const { Secret, ...rest } = desired.spec;
    // Listed as changed but left out of the manifest: Converge set it before, so it is cleared.
    const send = (desired.changedWriteOnly ?? ['Secret']).includes('Secret');
    const note = await ctx
      .client(notesService)
      .write(desired.key.name, { ...rest, ...(send ? { Secret: Secret ?? '' } : {}), Owner: 'converge' });
    return observed(desired.key.name, note);
  },
  async delete(ctx, o) {
    await ctx.client(notesService).remove(o.key.name);
  },
};

export const notesModule: CliServiceModule = {
  definition: notesService,
  kinds: [noteKind],
  commands(program, { io, action }) {
    program
      .command('notes')
      .description('list notes')
      .action(
        action(async () => {
          const { withClient } = await import('../../src/cli/service-client.js');
          const notes = await withClient(io, notesService, (c) => c.list());
          io.stdout.write(`${notes.map((n) => n.Name).join('\n')}\n`);
          return 0;
        }),
      );
  },
};
