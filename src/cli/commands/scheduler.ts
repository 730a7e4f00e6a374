/** The scheduler's operator commands: `converge job …`. Handlers load when they run. */
import { Option } from 'commander';
import type { ServiceCli } from '../service-module.js';
import { parseCount } from './job-args.js';

const readHandlers = () => import('./job.js');
const writeHandlers = () => import('./job-write.js');

const NAMESPACE_HELP = "the job's namespace (default: the service's default, `default`)";
const noColor = () => new Option('--no-color', 'plain output, no colours (NO_COLOR does the same)');
const collect = (value: string, previous: string[] = []) => [...previous, value];

export const cli: ServiceCli = {
  commands(program, { io, action }) {
    const job = program
      .command('job')
      .description(
        "the scheduler's jobs: status, history, allocations; plan a job file; dispatch, scale, revert, stop (register with `converge apply`)",
      );
    job
      .command('status')
      .description(
        'show a job (header, group summary, latest deployment, allocations), or list jobs without JOB',
      )
      .argument('[job]', 'job ID')
      .option('--namespace <ns>', `${NAMESPACE_HELP}; * lists every namespace`)
      .option('--prefix <prefix>', 'list only jobs whose ID starts with this (without JOB)')
      .option('--json', "print the service's JSON")
      .action(
        action(async (id: string | undefined, opts) => (await readHandlers()).jobStatusCommand(id, opts, io)),
      );
    job
      .command('history')
      .description("list a job's versions, newest first; --diffs shows what each changed")
      .argument('<job>', 'job ID')
      .option('--namespace <ns>', NAMESPACE_HELP)
      .option('--diffs', 'show each version’s diff to the one before it')
      .option('--json', "print the service's JSON")
      .addOption(noColor())
      .action(action(async (id: string, opts) => (await readHandlers()).jobHistoryCommand(id, opts, io)));
    job
      .command('allocs')
      .description("list a job's allocations")
      .argument('<job>', 'job ID')
      .option('--namespace <ns>', NAMESPACE_HELP)
      .option('--all', 'include those of an earlier job with the same ID')
      .option('--json', "print the service's JSON")
      .action(action(async (id: string, opts) => (await readHandlers()).jobAllocsCommand(id, opts, io)));
    job
      .command('evals')
      .description("list a job's evaluations")
      .argument('<job>', 'job ID')
      .option('--namespace <ns>', NAMESPACE_HELP)
      .option('--json', "print the service's JSON")
      .action(action(async (id: string, opts) => (await readHandlers()).jobEvalsCommand(id, opts, io)));
    job
      .command('deployments')
      .description("list a job's deployments")
      .argument('<job>', 'job ID')
      .option('--namespace <ns>', NAMESPACE_HELP)
      .option('--all', 'include those of an earlier job with the same ID')
      .option('--json', "print the service's JSON")
      .action(action(async (id: string, opts) => (await readHandlers()).jobDeploymentsCommand(id, opts, io)));
    job
      .command('plan')
      .description(
        'dry-run a job file (.json: {"Job": …} or a job; otherwise a text spec the service parses): the diff and what the scheduler would do',
      )
      .argument('<file>', 'job file')
      .option('--namespace <ns>', "namespace to plan in (default: the file's, else the service's default)")
      .option('--detailed-exitcode', 'exit 0 when there are no changes, 2 when there are, 1 on error')
      .option('--verbose', 'also show unchanged fields of the diff')
      .option('--json', "print the service's JSON")
      .addOption(noColor())
      .action(action(async (file: string, opts) => (await readHandlers()).jobPlanCommand(file, opts, io)));
    job
      .command('dispatch')
      .description('start an instance of a parameterized job')
      .argument('<job>', 'job ID')
      .option('--namespace <ns>', NAMESPACE_HELP)
      .option('--payload-file <file>', 'payload to send (at most 16384 bytes); - reads standard input')
      .option('--meta <key=value>', 'metadata for the instance (repeatable)', collect)
      .option('--json', "print the service's JSON")
      .action(action(async (id: string, opts) => (await writeHandlers()).jobDispatchCommand(id, opts, io)));
    job
      .command('revert')
      .description("register an earlier version's spec again, as a new version")
      .argument('<job>', 'job ID')
      .argument('<version>', 'version to revert to')
      .option('--namespace <ns>', NAMESPACE_HELP)
      .option('--enforce-prior-version <n>', 'only if the current version is this one', (v: string) =>
        parseCount(v, '--enforce-prior-version'),
      )
      .option('--json', "print the service's JSON")
      .action(
        action(async (id: string, version: string, opts) =>
          (await writeHandlers()).jobRevertCommand(id, version, opts, io),
        ),
      );
    job
      .command('stable')
      .description('mark a version stable (or not, with --unset)')
      .argument('<job>', 'job ID')
      .argument('<version>', 'job version')
      .option('--namespace <ns>', NAMESPACE_HELP)
      .option('--unset', 'mark it not stable')
      .option('--json', "print the service's JSON")
      .action(
        action(async (id: string, version: string, opts) =>
          (await writeHandlers()).jobStableCommand(id, version, opts, io),
        ),
      );
    job
      .command('evaluate')
      .description('create a new evaluation of a job')
      .argument('<job>', 'job ID')
      .option('--namespace <ns>', NAMESPACE_HELP)
      .option('--force-reschedule', 'reschedule failed allocations now, past their limits and delays')
      .option('--json', "print the service's JSON")
      .action(action(async (id: string, opts) => (await writeHandlers()).jobEvaluateCommand(id, opts, io)));
    job
      .command('force-periodic')
      .description('launch a periodic job now, overlap or not')
      .argument('<job>', 'job ID')
      .option('--namespace <ns>', NAMESPACE_HELP)
      .option('--json', "print the service's JSON")
      .action(
        action(async (id: string, opts) => (await writeHandlers()).jobForcePeriodicCommand(id, opts, io)),
      );
    job
      .command('scale')
      .description("change a task group's count (or, without COUNT, record a scaling event)")
      .argument('<job>', 'job ID')
      .argument('<group>', 'task group')
      .argument('[count]', 'new count')
      .option('--namespace <ns>', NAMESPACE_HELP)
      .option('--message <text>', 'why (recorded with the scaling event); this or --error is required')
      .option('--error <text>', 'record a failed scaling with this text instead of changing the count')
      .option('--json', "print the service's JSON")
      .action(
        action(async (id: string, group: string, count: string | undefined, opts) =>
          (await writeHandlers()).jobScaleCommand(id, group, count, opts, io),
        ),
      );
    job
      .command('stop')
      .description('stop a job (asks first on a terminal; --yes otherwise)')
      .argument('<job>', 'job ID')
      .option('--namespace <ns>', NAMESPACE_HELP)
      .option('--purge', 'also purge it at once (no longer queryable)')
      .option('--yes', 'stop without asking (needed when there is no terminal, as in CI)')
      .option('--json', "print the service's JSON")
      .action(action(async (id: string, opts) => (await writeHandlers()).jobStopCommand(id, opts, io)));
  },
};
