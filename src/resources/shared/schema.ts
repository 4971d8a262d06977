// Schema pieces the three kinds share, so a rule (e.g. what a Kubernetes name looks like)
// is written once.
import { z } from "zod";
// The contract carries the Kubernetes keys of zod's `.meta()` (x-kubernetes-validations, …).
import "../../runtime/contract.ts";

/** RFC 1123 DNS subdomain, the rule for Secret and most object names. */
export const dnsSubdomainSchema = z.string().min(1).max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);

export const localObjectRefSchema = z.object({
  name: dnsSubdomainSchema.meta({ description: "Name of the object in the same namespace." }),
}).meta({ description: "A reference to an object in the same namespace." });

/** The name a cached (unparsed) object's `spec.<field>` reference names, if it is a valid one. */
export function specRefName(obj: object, field: string): string | undefined {
  const parsed = localObjectRefSchema.safeParse((obj as { spec?: Record<string, unknown> }).spec?.[field]);
  return parsed.success ? parsed.data.name : undefined;
}

export const deletionPolicySchema = z.enum(["Delete", "Retain"]).default("Delete").meta({
  description: "What deleting this resource does to the cloud object: Delete removes it; Retain leaves it in the account and only drops the Kubernetes resource.",
});

/** Linode ids of regions and plan types, e.g. `us-east`, `g6-dedicated-2`. */
export const linodeSlugSchema = z.string().min(1).max(64).regex(/^[a-z0-9][a-z0-9-]*$/);

/** A positive Linode object id (int64 on the wire). */
export const linodeIdSchema = z.int().min(1);

export const credentialsRefSchema = z.object({
  name: dnsSubdomainSchema.meta({ description: "Name of the Secret in the same namespace; it must carry the label linode.operator.dev/credentials=true (only such Secrets are read)." }),
  key: z.string().min(1).max(253).regex(/^[-._a-zA-Z0-9]+$/).default("token").meta({ description: "The key holding the Linode API token (default token)." }),
}).meta({
  description: "The Linode API token to act with, from a Secret in this namespace labelled linode.operator.dev/credentials=true (kubectl create secret generic linode-team-a --from-literal=token=...; kubectl label secret linode-team-a linode.operator.dev/credentials=true): the cloud object lives in that token's account. Without it the operator's own token is used, unless the operator requires one. A rotated token is picked up when the Secret changes.",
});
export type CredentialsRef = z.infer<typeof credentialsRefSchema>;

/** status.account: where the cloud object lives (written by the operator only). */
export const accountRecordSchema = z.object({
  id: z.string().meta({ description: "The account, as a hash of the API token it was last reached with (never the token itself)." }),
  credentialsRef: z.object({
    name: z.string().meta({ description: "Name of the Secret in this namespace." }),
    key: z.string().meta({ description: "Its key holding the token." }),
  }).optional().meta({ description: "The Secret that token came from; absent: the operator's own token." }),
}).meta({ description: "The Linode account the cloud object lives in, as recorded when it was created or adopted. It never switches by itself: credentials that cannot see the object are AccountChanged, and deleting the resource acts with this Secret (which is kept until then)." });
export type AccountRecord = z.infer<typeof accountRecordSchema>;

/** status.externalIdProof: the operator's proof that status.externalId is this resource's own (credentials.ts). */
export const externalIdProofSchema = z.string().max(64).optional().meta({
  description: "The operator's proof that status.externalId is this resource's own: an HMAC of the resource's uid and the cloud id under the install's ownership key (a Secret beside the operator's Lease that only it reads; without one, the account's API token), which no tenant can compute. A status written by anyone else, or a resource restored from a backup (a new uid), has no valid one: its cloud object is acted on only if it provably was made by this resource (its label, created after it) or is named in the spec where adoption is allowed (OwnershipUnproven).",
});

export const managementPolicySchema = z.enum(["Manage", "Observe"]).default("Manage");

/** A request token: any new value performs its action once. */
export const requestTokenSchema = z.string().min(1).max(128);

/** What status.lastRequests records of each token. */
export const actionRecord = {
  token: z.string().meta({ description: "The request token." }),
  startedAt: z.string().optional().meta({ description: "When an at-most-once action was about to be sent (RFC 3339). Without completedAt: its outcome is unknown, and it is not sent again." }),
  completedAt: z.string().optional().meta({ description: "When the action completed (RFC 3339)." }),
};

/** The record of the last recreate token (spec.requests.recreate). */
export const recreateRecordSchema = z.object({
  ...actionRecord,
  skipped: z.string().optional().meta({ description: "Why the token did nothing (the cloud object existed)." }),
}).meta({ description: "The last recreate token seen." });
