// The flags of `install` and `uninstall`, read with parseArgs and checked with zod before
// anything runs: a bad flag is one clear line, not a half-done install.
import { parseArgs } from "node:util";
import { z } from "zod";

/** A DNS label (RFC 1123), as Kubernetes wants a namespace name. */
const dnsLabel = z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "lowercase letters, digits and '-', starting and ending with a letter or digit").max(63);
/** Helm's rule for release names (53 characters, so that `<release>-<chart>` objects fit). */
const releaseName = dnsLabel.max(53);
const duration = z.string().regex(/^(\d+h)?(\d+m)?(\d+s)?$/, "a duration such as 90s, 5m or 1h").refine((s) => s !== "", "a duration such as 90s, 5m or 1h");
/** A duration as Helm writes it (`5m`, `90s`, `1h30m`) in milliseconds. */
export const durationMillis = (d: string): number =>
  [...d.matchAll(/(\d+)([hms])/g)].reduce((t, m) => t + Number(m[1]) * (m[2] === "h" ? 3_600_000 : m[2] === "m" ? 60_000 : 1000), 0);

/** `key=value` for helm --set (the key is a path such as image.tag or extraEnv[0].name). */
const setArg = z.string().regex(/^[^=\s]+=/, "KEY=VALUE");

const common = {
  namespace: dnsLabel.default("linode-operator"),
  release: releaseName.default("linode-operator"),
  kubeconfig: z.string().min(1).optional(),
  context: z.string().min(1).optional(),
  timeout: duration.default("5m"),
  dryRun: z.boolean().default(false),
};

/** A registry repository to push to: host[:port]/path, no tag, no scheme. */
const registryRepository = z.string().regex(/^[a-zA-Z0-9.-]+(:\d+)?(\/[a-z0-9]+(?:[._-][a-z0-9]+)*)+$/, "host[:port]/path, e.g. ghcr.io/me/linode-operator (no tag, no https://)");
/** An image the cluster can already pull, by tag (the chart's image values take a repository and a tag). */
const imageRef = z.string().regex(/^[a-zA-Z0-9.-]+(:\d+)?(\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*:[\w][\w.-]{0,127}$/, "repository:tag, e.g. ghcr.io/me/linode-operator:0.2.0");

export const LOADERS = ["kind", "k3d", "minikube", "ctr"] as const;

export const installOptionsSchema = z.object({
  ...common,
  values: z.array(z.string().min(1)).default([]),
  set: z.array(setArg).default([]),
  loadWith: z.enum(LOADERS).optional(),
  registry: registryRepository.optional(),
  registryInsecure: z.boolean().default(false),
  containerdAddress: z.string().min(1).default("/run/containerd/containerd.sock"),
  image: imageRef.optional(),
  tokenFile: z.string().min(1).optional(),
  chart: z.string().min(1).optional(),
}).strict()
  .refine((o) => !(o.loadWith !== undefined && o.registry !== undefined), { message: "--load-with and --registry are two ways to get the image to the cluster: give one" })
  .refine((o) => !(o.image !== undefined && (o.loadWith !== undefined || o.registry !== undefined)), { message: "--image names an image the cluster pulls as it is: nothing is built, loaded or pushed, so it takes no --load-with or --registry" });
export type InstallOptions = z.infer<typeof installOptionsSchema>;

export const uninstallOptionsSchema = z.object({
  ...common,
  deleteCrds: z.boolean().default(false),
  force: z.boolean().default(false),
}).strict();
export type UninstallOptions = z.infer<typeof uninstallOptionsSchema>;

const commonFlags = {
  namespace: { type: "string", short: "n" },
  release: { type: "string" },
  kubeconfig: { type: "string" },
  context: { type: "string" },
  timeout: { type: "string" },
  "dry-run": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

const camel = (flag: string): string => flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

/** parseArgs' answer with camelCase keys and no undefined values (zod applies the defaults). */
function camelValues(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([k, v]) => v !== undefined && k !== "help").map(([k, v]) => [camel(k), v]));
}

/** Answers "help" for -h/--help; else the checked options, or throws one line per problem. */
export function parseInstallArgs(argv: string[]): InstallOptions | "help" {
  const { values } = parseArgs({
    args: argv, strict: true, allowPositionals: false,
    options: {
      ...commonFlags,
      values: { type: "string", short: "f", multiple: true },
      set: { type: "string", multiple: true },
      "load-with": { type: "string" },
      registry: { type: "string" },
      "registry-insecure": { type: "boolean" },
      "containerd-address": { type: "string" },
      image: { type: "string" },
      "token-file": { type: "string" },
      chart: { type: "string" },
    },
  });
  if (values.help === true) return "help";
  return checked(installOptionsSchema, camelValues(values));
}

export function parseUninstallArgs(argv: string[]): UninstallOptions | "help" {
  const { values } = parseArgs({
    args: argv, strict: true, allowPositionals: false,
    options: { ...commonFlags, "delete-crds": { type: "boolean" }, force: { type: "boolean" } },
  });
  if (values.help === true) return "help";
  return checked(uninstallOptionsSchema, camelValues(values));
}

/** The command's options; or, for --help (printed) 0, for a bad flag (said in one line per problem) 2. */
export function readOptions<O extends object>(command: string, argv: string[], parse: (argv: string[]) => O | "help", help: string): O | number {
  try {
    const opts = parse(argv);
    if (opts !== "help") return opts;
    process.stdout.write(help);
    return 0;
  } catch (err) {
    process.stderr.write(`linode-operator ${command}: ${(err as Error).message}\n(linode-operator ${command} --help)\n`);
    return 2;
  }
}

function checked<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const flag = (path: readonly PropertyKey[]): string => (path.length === 0 ? "" : `--${String(path[0]).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}: `);
  throw new Error(r.error.issues.map((i) => `${flag(i.path)}${i.message}`).join("\n"));
}
