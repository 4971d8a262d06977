// The command line of `linode-operator status` / `kubectl linode status`, read the way kubectl
// reads its own: -n/--namespace, -A/--all-namespaces, --kubeconfig, --context, -o/--output.
import { parseArgs } from "node:util";
import { z } from "zod";

/** The help, with the names each kind answers to (kindNamesHelp). */
export const statusHelp = (kinds: string): string => `Usage: kubectl linode status [<kind>/<name> | <kind> <name>] [options]
       linode-operator status [<kind>/<name> | <kind> <name>] [options]

With a name: what the operator sees of one ManagedDatabase, DatabaseSnapshot, NodeBalancer or DatabaseConnectionPool:
its conditions and their age, its latest Events, the cloud object as the Linode API reports it,
the keys of its connection Secret (never their values) and what the operator does next.
Without one: every object of the four kinds that is not Ready, one line each, with its reason.

Kinds:
  ${kinds.split("; ").join("\n  ")}

  -n, --namespace NS      the namespace (default: the context's, else default)
  -A, --all-namespaces    list objects of every namespace (without a name)
      --kubeconfig PATH   the kubeconfig (default: KUBECONFIG, else ~/.kube/config)
      --context NAME      a context of the kubeconfig other than its current one
  -o, --output FORMAT     text (default) or json
      --events N          how many of the latest Events to show (default 10)
  -h, --help              show this help

The cloud object is read with the token of the object's spec.credentialsRef Secret when you may
read it, else LINODE_TOKEN (LINODE_API_URL: another API, e.g. the emulator). Without either, the
Kubernetes side is shown and the cloud side says it needs a token.
`;

const optionsSchema = z.object({
  namespace: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "not a namespace name").max(63).optional(),
  "all-namespaces": z.boolean(),
  kubeconfig: z.string().min(1).optional(),
  context: z.string().min(1).optional(),
  output: z.enum(["text", "json"]),
  events: z.coerce.number().int().min(0).max(1000),
  help: z.boolean(),
});

export interface StatusArgs {
  /** The object asked about; absent: list what is not Ready. */
  target?: { kind: string; name: string };
  namespace?: string;
  allNamespaces: boolean;
  kubeconfig?: string;
  context?: string;
  output: "text" | "json";
  events: number;
  help: boolean;
}

/** Parses argv (after `status`); throws an Error whose message says what is wrong. */
export function parseStatusArgs(argv: string[]): StatusArgs {
  const { values, positionals } = parseArgs({
    args: argv, strict: true, allowPositionals: true,
    options: {
      namespace: { type: "string", short: "n" },
      "all-namespaces": { type: "boolean", short: "A", default: false },
      kubeconfig: { type: "string" },
      context: { type: "string" },
      output: { type: "string", short: "o", default: "text" },
      events: { type: "string", default: "10" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const parsed = optionsSchema.safeParse(values);
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `--${i.path.join(".")}: ${i.message}`).join("; "));
  const o = parsed.data;
  const args: StatusArgs = {
    allNamespaces: o["all-namespaces"], output: o.output, events: o.events, help: o.help,
    ...(o.namespace !== undefined ? { namespace: o.namespace } : {}),
    ...(o.kubeconfig !== undefined ? { kubeconfig: o.kubeconfig } : {}),
    ...(o.context !== undefined ? { context: o.context } : {}),
  };
  const target = targetOf(positionals);
  if (target !== undefined) {
    if (args.allNamespaces) throw new Error("-A lists what is not Ready; with a name, use -n to say its namespace");
    args.target = target;
  }
  return args;
}

const nameSchema = z.string().min(1).max(253).regex(/^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/, "not an object name");

function targetOf(positionals: string[]): { kind: string; name: string } | undefined {
  if (positionals.length === 0) return undefined;
  if (positionals.length > 2) throw new Error(`one object at a time: <kind>/<name> or <kind> <name>, not ${positionals.join(" ")}`);
  const [first = "", second] = positionals;
  const [kind = "", name = ""] = second !== undefined ? [first, second] : first.split("/", 2);
  if (second === undefined && !first.includes("/")) throw new Error(`name the object as <kind>/<name> (e.g. linodedb/${first}) or <kind> <name>`);
  const checked = nameSchema.safeParse(name);
  if (!checked.success) throw new Error(`"${name}": ${checked.error.issues[0]?.message ?? "not an object name"}`);
  return { kind, name: checked.data };
}
