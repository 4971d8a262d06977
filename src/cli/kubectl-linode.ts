#!/usr/bin/env node
// `kubectl linode`: the kubectl plugin (kubectl runs an executable named kubectl-linode found on
// PATH, with the arguments after `linode` and its own environment, KUBECONFIG included). It runs
// the same code as `linode-operator status`.
import { invokedDirectly, MIN_NODE, nodeAtLeast } from "./entry.ts";

const HELP = `kubectl linode — see what linode-operator sees

Usage: kubectl linode status [<kind>/<name>] [-n NS | -A] [-o json]

Commands:
  status   an object's conditions, Events, cloud object, Secret keys and next step;
           without a name, every ManagedDatabase, DatabaseSnapshot, NodeBalancer and
           DatabaseConnectionPool not Ready
  help     show this help, or \`help status\` for its options
`;

export async function plugin(argv: string[]): Promise<number> {
  if (!nodeAtLeast(process.version)) {
    process.stderr.write(`kubectl-linode: needs Node.js ${MIN_NODE} or newer; this is ${process.version}\n`);
    return 2;
  }
  const [name, ...rest] = argv;
  if (name === "status") return (await import("./status.ts")).main(rest);
  if (name === "help" && rest[0] === "status") return (await import("./status.ts")).main(["--help"]);
  if (name === undefined || name === "help" || name === "--help" || name === "-h") { process.stdout.write(HELP); return 0; }
  process.stderr.write(`kubectl linode: unknown command '${name}'\n\n${HELP}`);
  return 2;
}

if (invokedDirectly(import.meta.url)) {
  plugin(process.argv.slice(2)).then(
    (code) => { process.exitCode = code; },
    (err: unknown) => {
      process.stderr.write(`kubectl-linode: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
