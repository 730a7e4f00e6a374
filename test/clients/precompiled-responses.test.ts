/**
 * The answer checks the build generates (scripts/build-validators.mjs) must say exactly what ajv's
 * compiler says of the same response schema: the `unexpected response` messages are made from their
 * errors. Every schema a client's responses.ts exports, against broken and hostile bodies.
 */
import { describe, expect, test } from 'vitest';
import { schemaKey } from '../../src/common/precompiled.js';
import { newAjv } from '../../src/common/precompiled.js';
import { responseValidatorsSource } from '../../src/clients/http/precompile.js';
import { RESPONSE_AJV_OPTIONS, type SchemaSource, schemaOf } from '../../src/clients/http/shape.js';
import * as registry from '../../src/clients/registry/responses.js';
import * as scheduler from '../../src/clients/scheduler/responses.js';
import * as secrets from '../../src/clients/secrets/responses.js';
import * as workspaces from '../../src/clients/workspaces/responses.js';
import { evaluateStandalone, outcome } from '../support/standalone.js';

const shapes = Object.entries({ ...registry, ...scheduler, ...secrets, ...workspaces }) as [
  string,
  SchemaSource,
][];
const generated = evaluateStandalone(responseValidatorsSource(shapes.map(([, shape]) => shape)));
const ajv = newAjv(RESPONSE_AJV_OPTIONS);

function nested(depth: number): unknown {
  let value: unknown = {};
  for (let i = 0; i < depth; i += 1) value = { Objects: [value], Fields: [{ Name: 1 }] };
  return value;
}

/** Wrong types everywhere a client reads, prototype keys, control characters, deep nesting. */
const BODIES: unknown[] = [
  null,
  'text',
  7,
  [],
  {},
  [{}],
  [{ ID: 5, Name: [], Policies: 'x', Meta: 'x' }],
  { ID: 'a', Name: 'b', Policies: [{ ID: 1 }], data: 'x', warnings: 'x' },
  { data: { id: 5, attributes: 'x' }, included: {} },
  JSON.parse('{"__proto__": {"ID": 1}, "constructor": "x", "\\u001b[2J": 1}'),
  { Diff: nested(100), Annotations: [nested(3)] },
];

describe('generated response validators', () => {
  test.each(shapes)('%s: the generated check reports what ajv reports', (_name, shape) => {
    const schema = schemaOf(shape);
    const precompiled = generated.get(schemaKey(schema));
    expect(precompiled, 'the build generates a check for every response schema').toBeDefined();
    const compiled = ajv.compile(schema);
    const verdicts = BODIES.map((body) => {
      const expected = outcome(compiled, body) as { ok: unknown };
      expect(outcome(precompiled!, body)).toEqual(expected);
      return expected.ok;
    });
    expect(verdicts).toContain(false);
  });
});
