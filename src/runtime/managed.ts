// The contract between the generic reconciler and each kind (Crossplane's ExternalClient,
// ACK's resource manager): a kind says how to observe, create, update and delete its cloud
// object and what its status looks like; the reconciler does everything else.
import type { KubeObject, ObjectKey, ResourceType } from "../kube/client.ts";
import type { Condition } from "./condition-schema.ts";

export interface ManagedObject extends KubeObject {
  spec?: unknown;
  status?: { observedGeneration?: number; conditions?: Condition[] } & Record<string, unknown>;
}

export interface Policies {
  deletion: "Delete" | "Retain";
  management: "Manage" | "Observe";
}

/** One reconcile's view of an object: the raw object, its parsed spec and its identity. */
export interface Managed<Spec> {
  obj: ManagedObject;
  key: ObjectKey;
  spec: Spec;
  /** The cloud id recorded on the object (annotation), if any. */
  externalId: string | undefined;
  policies: Policies;
}

export type Observation<Status> =
  | { exists: false }
  | {
    exists: true;
    externalId: string;
    /** Status fields mirrored from the cloud object. */
    status: Status;
    /** The cloud object is usable (e.g. the API says active and the Secret is published). */
    ready: boolean;
    /** Why it is not ready yet: a Ready reason such as Creating or Updating, plus a message. */
    readyReason?: string;
    readyMessage?: string;
    /** The cloud object matches the spec. */
    upToDate: boolean;
    /** What differs, for the Synced message and the Event. */
    diff?: string;
    /** When to look again; the reconciler picks a default from `ready` otherwise. */
    pollMillis?: number;
  };

export interface ExternalClient<Spec, Status> {
  observe(m: Managed<Spec>, signal: AbortSignal): Promise<Observation<Status>>;
  create(m: Managed<Spec>, signal: AbortSignal): Promise<{ externalId: string }>;
  update(m: Managed<Spec>, observed: Extract<Observation<Status>, { exists: true }>, signal: AbortSignal): Promise<void>;
  /** Resolves `gone: true` once the cloud object no longer exists. */
  delete(m: Managed<Spec>, observed: Extract<Observation<Status>, { exists: true }>, signal: AbortSignal): Promise<{ gone: boolean }>;
  /**
   * Work that follows a successful observation (publishing the connection Secret, one-shot
   * request tokens). Returns status fields to merge, and may downgrade readiness.
   */
  afterObserve?(m: Managed<Spec>, observed: Extract<Observation<Status>, { exists: true }>, signal: AbortSignal): Promise<AfterObserve | undefined>;
}

export interface AfterObserve {
  status?: Record<string, unknown>;
  notReady?: { reason: string; message: string };
  /** Look again sooner than the observation said (e.g. an action just started). */
  pollMillis?: number;
}

export interface KindDescriptor<Spec, Status> {
  type: ResourceType;
  /** Parses and defaults the spec; throws (e.g. a ZodError) when it is invalid. */
  parseSpec(raw: unknown): Spec;
  policies(spec: Spec): Policies;
  external: ExternalClient<Spec, Status>;
  /** Poll intervals: while settling (provisioning, updating) and once ready. */
  poll?: { pendingMillis?: number; readyMillis?: number };
}
