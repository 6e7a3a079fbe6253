import { parseArgs } from 'node:util';
import { CHECKED_APPS, checkConfigFile } from './check';
import { CliError } from './cli.errors';
import { initServer } from './init-server';
import { withProgress } from './progress';
import { callTool, listTools, parseToolArguments } from './remote';
import { importTools } from './tools-import';
import { warm } from './warm';

const USAGE = `Usage: stoa <command> …
  init server <name> [--dir DIR] [--port P]     scaffold server.yaml, tools.yaml, a tools package and a skill
  tools import <module> [--path DIR]… [--out tools.yaml] [--python python3]
                                                write tool definitions from a Python module's typed functions
  tools <url> [--token T]                       list a server's tools
  call <url> <tool> [key=value …] [--token T]   call a tool and print its JSON result (values parse as JSON)
  check <config.yaml> [--app ${CHECKED_APPS.join('|')}]
                                                validate any app's YAML against its schema, print every problem
  warm <server.yaml>                            build the environment and fetch the assets, with progress
Exit codes: 0 done, 1 failed (a tool error, problems found), 2 wrong command line.`;

const out = (text: string) => process.stdout.write(`${text}\n`);

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      token: { type: 'string', short: 't' },
      dir: { type: 'string' },
      port: { type: 'string' },
      path: { type: 'string', multiple: true },
      out: { type: 'string' },
      python: { type: 'string' },
      app: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command) return (out(USAGE), values.help ? 0 : 2);
  const token = values.token ?? process.env.STOA_TOKEN;
  switch (command) {
    case 'init': {
      const [what, name] = rest;
      if (what !== 'server' || !name) throw new CliError(`Usage: stoa init server <name>\n${USAGE}`, 2);
      const port = values.port === undefined ? undefined : Number(values.port);
      if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536))
        throw new CliError(`--port ${values.port}: use a port number between 1 and 65535.`, 2);
      const made = initServer({ name, dir: values.dir, port });
      for (const file of made.files) out(`created ${file}`);
      out(`\nStart it: node dist/apps/executor/main.js --config ${made.dir}/server.yaml`);
      return 0;
    }
    case 'tools': {
      if (rest[0] === 'import') {
        const module = rest[1];
        if (!module) throw new CliError(`Usage: stoa tools import <module>\n${USAGE}`, 2);
        const outFile = values.out ?? 'tools.yaml';
        const done = await withProgress(`Importing ${module}`, () =>
          importTools({
            module,
            out: outFile,
            paths: values.path ?? [process.cwd()],
            python: values.python ?? 'python3',
          }),
        );
        for (const w of done.warnings) process.stderr.write(`warning: ${w}\n`);
        out(`wrote ${done.tools.length} tool(s) to ${outFile}: ${done.tools.join(', ')}`);
        return 0;
      }
      const [url] = rest;
      if (!url) throw new CliError(`Usage: stoa tools <url>\n${USAGE}`, 2);
      const tools = await listTools(url, token);
      const width = Math.max(...tools.map((t) => t.name.length), 4);
      for (const t of tools) out(`${t.name.padEnd(width)}  ${t.summary}`);
      return 0;
    }
    case 'call': {
      const [url, tool, ...pairs] = rest;
      if (!url || !tool) throw new CliError(`Usage: stoa call <url> <tool> [key=value …]\n${USAGE}`, 2);
      const result = await callTool(url, tool, parseToolArguments(pairs), token);
      out(result.output);
      return result.isError ? 1 : 0;
    }
    case 'check': {
      const [file] = rest;
      if (!file) throw new CliError(`Usage: stoa check <config.yaml>\n${USAGE}`, 2);
      const report = await checkConfigFile(file, values.app);
      if (!report.problems.length) return (out(`✓ ${file} is a valid ${report.app} config`), 0);
      out(`✗ ${file} (${report.app} config): ${report.problems.length} problem(s)`);
      for (const p of report.problems) out(`  - ${p}`);
      return 1;
    }
    case 'warm': {
      const [file] = rest;
      if (!file) throw new CliError(`Usage: stoa warm <server.yaml>\n${USAGE}`, 2);
      await warm(file);
      return 0;
    }
    default:
      throw new CliError(`Unknown command '${command}'.\n${USAGE}`, 2);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const usage = err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`${(err as Error).message}${usage ? `\n${USAGE}` : ''}\n`);
    process.exit(err instanceof CliError ? err.exitCode : usage ? 2 : 1);
  },
);
