/** Workspace runs the kind conformance suite (see ./suite.ts for the rules). */
import { workspacesService } from '../../src/clients/workspaces/definition.js';
import { runKindConformance } from './suite.js';

/** The sandbox's default organization. */
const ORGANIZATION = 'sandbox';

runKindConformance({
  kind: 'Workspace',
  namespace: ORGANIZATION,
  spec: () => ({
    description: 'managed by the conformance suite',
    'working-directory': 'envs/conformance',
    'tag-names': ['conformance', 'web'],
    'trigger-prefixes': ['modules/'],
  }),
  change: { field: 'description', value: 'changed in the manifest' },
  // A setting the manifest leaves at its create default, changed in the UI: README promises drift.
  drift: {
    field: 'execution-mode',
    async apply({ ctx, observed }) {
      await ctx
        .client(workspacesService)
        .updateWorkspace({ id: observed.id! }, { 'execution-mode': 'local' });
    },
  },
  // Created by someone else: no `source-name: converge` marker.
  async foreign({ ctx, key }) {
    await ctx
      .client(workspacesService)
      .createWorkspace(key.namespace, { name: key.name, description: 'not managed by Converge' });
  },
});
