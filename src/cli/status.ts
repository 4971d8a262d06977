// `linode-operator status` and `kubectl linode status`: what the operator sees of an object (or
// of every object not Ready), read with the person's own kubeconfig and rights.
import { connectAsUser } from "../kube/config.ts";
import { errorChain } from "../kube/errors.ts";
import { kindDefinitions } from "../resources/index.ts";
import { API_GROUP } from "../runtime/kind-definition.ts";
import { parseStatusArgs, statusHelp, type StatusArgs } from "../status/args.ts";
import { kindNamesHelp, resolveKind } from "../status/kind-names.ts";
import { gatherNotReady, gatherObject } from "../status/report.ts";
import { paintFor, renderNotReady, renderObject } from "../status/render-text.ts";

/** Where the command writes; the process's streams unless a caller (the plugin's entry, a test) says otherwise. */
export interface Io {
  stdout: { write(s: string): unknown; isTTY?: boolean };
  stderr: { write(s: string): unknown };
  env: NodeJS.ProcessEnv;
}

const processIo = (): Io => ({ stdout: process.stdout, stderr: process.stderr, env: process.env });

/** The field manager of this read-only client (it writes nothing). */
const FIELD_MANAGER = "kubectl-linode";

export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  let args: StatusArgs;
  try {
    args = parseStatusArgs(argv);
  } catch (err) {
    io.stderr.write(`error: ${errorChain(err)}\n\n${statusHelp(kindNamesHelp(kindDefinitions))}`);
    return 2;
  }
  if (args.help) { io.stdout.write(statusHelp(kindNamesHelp(kindDefinitions))); return 0; }
  const def = args.target !== undefined ? resolveKind(args.target.kind, kindDefinitions) : undefined;
  if (args.target !== undefined && def === undefined) {
    io.stderr.write(`error: "${args.target.kind}" is not a kind of linode-operator's: ${kindNamesHelp(kindDefinitions)}\n`);
    return 2;
  }
  const paint = paintFor(io.stdout, io.env);
  try {
    const user = connectAsUser({ kubeconfig: args.kubeconfig, context: args.context, namespace: args.namespace, fieldManager: FIELD_MANAGER });
    if (args.target === undefined || def === undefined) {
      const namespace = args.allNamespaces ? undefined : user.namespace;
      const report = await gatherNotReady(user.client, kindDefinitions, namespace);
      io.stdout.write(args.output === "json" ? `${JSON.stringify({ namespace: namespace ?? null, ...report }, null, 2)}\n` : renderNotReady(report, args.allNamespaces, user.namespace, paint));
      return 0;
    }
    const report = await gatherObject({ kube: user.client, def, namespace: user.namespace, name: args.target.name, events: args.events, env: io.env });
    if (report === undefined) {
      io.stderr.write(`Error from server (NotFound): ${def.plural}.${API_GROUP} "${args.target.name}" not found in namespace ${user.namespace}\n`);
      return 1;
    }
    io.stdout.write(args.output === "json" ? `${JSON.stringify(report, null, 2)}\n` : renderObject(report, paint));
    return 0;
  } catch (err) {
    io.stderr.write(`error: ${errorChain(err)}\n`);
    return 1;
  }
}
