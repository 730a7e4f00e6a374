/**
 * Services the sandbox does not emulate yet (the scheduler lands with its own issue). They hold their
 * path prefixes and answer 501 with a message that says so, rather than a bare 404, and the sandbox
 * exports their variables like every other service's, so scripts that read all four
 * `CONVERGE_<SERVICE>_ADDR` lines keep working. Each is replaced by its real module.
 */
import { jsonResponse } from '../../core/http.js';
import { defineService, type SandboxServiceDefinition } from '../../core/service.js';

function pendingService(name: string, pathPrefixes: string[]): SandboxServiceDefinition<undefined> {
  const answer = () =>
    jsonResponse(501, { errors: [`the sandbox does not emulate the ${name} service yet`] });
  return defineService<undefined>({
    name,
    pathPrefixes,
    errorResponse: (status, message) => jsonResponse(status, { errors: [message] }),
    notFound: answer,
    create: () => ({}),
  });
}

export const pendingSchedulerService = pendingService('scheduler', ['/v1/job', '/v1/jobs']);
