// Where the operator's Linode token is read from, again on each look: the file
// (--linode-token-file, e.g. a mounted Secret the kubelet refreshes), else the token Secret through
// the API (--linode-token-secret), else the environment (fixed for the process's life).
import { readFile } from "node:fs/promises";
import { errorChain } from "../kube/errors.ts";
import type { KubeApi } from "../kube/types.ts";

export interface TokenSourceSettings {
  linodeToken?: string | undefined;
  linodeTokenFile?: string | undefined;
  linodeTokenSecret?: string | undefined;
  linodeTokenSecretKey: string;
  /** The operator's namespace, where the token Secret is. */
  leaderElectionNamespace: string;
}

export type TokenRead = { token: string } | { token: undefined; problem: string };

/** Whether the token can change while the process runs (so a bad one is worth waiting out). */
export const tokenCanChange = (s: TokenSourceSettings): boolean => s.linodeTokenFile !== undefined || s.linodeTokenSecret !== undefined;

/** Where a fixed token must be fixed, for messages. */
export function tokenWhere(s: TokenSourceSettings): string {
  if (s.linodeTokenFile !== undefined) return `the token file ${s.linodeTokenFile}`;
  if (s.linodeTokenSecret !== undefined) return `the Secret ${s.leaderElectionNamespace}/${s.linodeTokenSecret} (key ${s.linodeTokenSecretKey})`;
  return "LINODE_TOKEN (then restart the operator)";
}

export async function readToken(s: TokenSourceSettings, kube: Pick<KubeApi, "getSecret">): Promise<TokenRead> {
  if (s.linodeTokenFile !== undefined) {
    try {
      const token = (await readFile(s.linodeTokenFile, "utf8")).trim();
      return token === "" ? { token: undefined, problem: `the token file ${s.linodeTokenFile} is empty` } : { token };
    } catch (err) {
      return { token: undefined, problem: `the token file ${s.linodeTokenFile} cannot be read (${(err as Error).message})` };
    }
  }
  if (s.linodeTokenSecret !== undefined) {
    try {
      const secret = await kube.getSecret({ namespace: s.leaderElectionNamespace, name: s.linodeTokenSecret });
      const raw = secret.data?.[s.linodeTokenSecretKey];
      const token = raw === undefined ? "" : Buffer.from(raw, "base64").toString("utf8").trim();
      if (token !== "") return { token };
      return s.linodeToken !== undefined ? { token: s.linodeToken } : { token: undefined, problem: `the Secret ${s.leaderElectionNamespace}/${s.linodeTokenSecret} has no ${s.linodeTokenSecretKey} key` };
    } catch (err) {
      // The environment's copy still stands: the Secret it came from may just be unreadable.
      if (s.linodeToken !== undefined) return { token: s.linodeToken };
      return { token: undefined, problem: `the Secret ${s.leaderElectionNamespace}/${s.linodeTokenSecret} cannot be read (${errorChain(err)})` };
    }
  }
  return s.linodeToken !== undefined ? { token: s.linodeToken } : { token: undefined, problem: "no token: set LINODE_TOKEN, --linode-token-file or --linode-token-secret" };
}
