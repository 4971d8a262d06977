// Schema pieces the three kinds share, so a rule (e.g. what a Kubernetes name looks like)
// is written once.
import { z } from "zod";
import "../../crd/kube-meta.ts";

/** RFC 1123 DNS subdomain, the rule for Secret and most object names. */
export const dnsSubdomainSchema = z.string().min(1).max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);

export const localObjectRefSchema = z.object({
  name: dnsSubdomainSchema.meta({ description: "Name of the object in the same namespace." }),
}).meta({ description: "A reference to an object in the same namespace." });

export const deletionPolicySchema = z.enum(["Delete", "Retain"]).default("Delete").meta({
  description: "What deleting this resource does to the cloud object: Delete removes it; Retain leaves it in the account and only drops the Kubernetes resource.",
});

/** Linode ids of regions and plan types, e.g. `us-east`, `g6-dedicated-2`. */
export const linodeSlugSchema = z.string().min(1).max(64).regex(/^[a-z0-9][a-z0-9-]*$/);

/** A positive Linode object id (int64 on the wire). */
export const linodeIdSchema = z.int().min(1);
