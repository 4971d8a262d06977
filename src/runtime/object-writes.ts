// The writes a pass makes to its own object besides its status conditions: the finalizer, and
// the records of which cloud object it acts on (status.externalId, status.createPending, with the
// annotation copy people read). Each keeps the pass's private copy in step with what it wrote.
import { isNotFound, KubeApiError } from "../kube/errors.ts";
import { keyOf, type KubeApi, type ResourceType } from "../kube/types.ts";
import { CREATE_PENDING_ANNOTATION, EXTERNAL_ID_ANNOTATION, FINALIZER, INITIALIZED_FROM_ANNOTATION } from "./annotations.ts";
import type { CreatePending, Managed, ManagedObject } from "./managed.ts";
import type { StatusWriter } from "./status-writer.ts";

const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

export class ObjectWrites {
  private readonly kube: KubeApi;
  private readonly type: ResourceType;
  private readonly wrote: (obj: ManagedObject, resourceVersion: string | undefined) => void;

  constructor(kube: KubeApi, type: ResourceType, wrote: (obj: ManagedObject, resourceVersion: string | undefined) => void) {
    this.kube = kube;
    this.type = type;
    this.wrote = wrote;
  }

  async ensureFinalizer(obj: ManagedObject): Promise<void> {
    const finalizers = obj.metadata.finalizers;
    if (finalizers?.includes(FINALIZER)) return;
    // A `test` first: if the cached copy is stale the patch fails as a conflict and the pass
    // starts again from a fresh copy, instead of acting on an object that changed meanwhile.
    const ops = finalizers === undefined
      ? [{ op: "test" as const, path: "/metadata/resourceVersion", value: obj.metadata.resourceVersion }, { op: "add" as const, path: "/metadata/finalizers", value: [FINALIZER] }]
      : [{ op: "test" as const, path: "/metadata/finalizers", value: finalizers }, { op: "add" as const, path: "/metadata/finalizers/-", value: FINALIZER }];
    this.keep(obj, await this.kube.jsonPatchCustom(this.type, keyOf(obj), ops));
  }

  async removeFinalizer(obj: ManagedObject): Promise<void> {
    const finalizers = obj.metadata.finalizers ?? [];
    const i = finalizers.indexOf(FINALIZER);
    if (i < 0) return;
    try {
      // test-then-remove by index: someone else's finalizer list change makes this a conflict.
      this.keep(obj, await this.kube.jsonPatchCustom(this.type, keyOf(obj), [
        { op: "test", path: `/metadata/finalizers/${i}`, value: FINALIZER },
        { op: "remove", path: `/metadata/finalizers/${i}` },
      ]));
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }

  /**
   * Records the intent to create (through the status subresource, with what the create targets),
   * on the condition that the object is still the version this pass read: a pass that runs on a
   * cache older than its own last write (the id recorded a moment ago) fails here as a conflict
   * and runs again, instead of creating a second object.
   */
  async markCreatePending(m: Managed<unknown>, status: StatusWriter, intent: Record<string, string>): Promise<void> {
    const pending: CreatePending = { ...intent, at: now() };
    await status.commit({ createPending: pending }, m.obj.metadata.resourceVersion);
    m.createPending = pending;
  }

  /** With `resourceVersion`, only if the object is still that version (else a 409, and nothing cleared). */
  async clearCreatePending(m: Managed<unknown>, status: StatusWriter, resourceVersion?: string): Promise<void> {
    await status.commit({ createPending: null }, resourceVersion);
    m.createPending = undefined;
    if (m.obj.metadata.annotations?.[CREATE_PENDING_ANNOTATION] !== undefined) await this.annotate(m, { [CREATE_PENDING_ANNOTATION]: null });
  }

  /** The record first (the truth), then its copy in the annotation. */
  async recordExternalId(m: Managed<unknown>, status: StatusWriter, externalId: string, with_: Record<string, unknown> = {}): Promise<void> {
    await status.commit({ ...with_, externalId, createPending: null }, undefined);
    m.externalId = externalId;
    m.createPending = undefined;
    await this.annotate(m, { [EXTERNAL_ID_ANNOTATION]: externalId, [CREATE_PENDING_ANNOTATION]: null });
  }

  /** The copy first, so an annotation never outlives the record it copies. */
  async forgetExternalId(m: Managed<unknown>, status: StatusWriter): Promise<void> {
    await this.annotate(m, { [EXTERNAL_ID_ANNOTATION]: null });
    await status.commit({ externalId: null }, m.obj.metadata.resourceVersion);
    m.externalId = undefined;
  }

  /**
   * Late initialization: `fields` written to the spec with the mark that says they were, in one
   * patch, only if the spec is still the one this pass planned from (`generation`): a user's
   * edit meanwhile is a conflict, never overwritten. Read fresh first, as the pass's own writes
   * (finalizer, records) moved the version on since. The pass's copy becomes what was written.
   */
  async initializeSpec(m: Managed<unknown>, generation: number | undefined, fields: Record<string, unknown>, externalId: string): Promise<void> {
    const fresh = await this.kube.getCustom<ManagedObject>(this.type, m.key);
    if (fresh.metadata.generation !== generation) throw new KubeApiError(409, "Conflict", "the spec changed since this pass read it");
    const updated = await this.kube.mergePatchCustom<ManagedObject>(this.type, m.key, {
      metadata: { resourceVersion: fresh.metadata.resourceVersion, annotations: { [INITIALIZED_FROM_ANNOTATION]: externalId } },
      ...(Object.keys(fields).length > 0 ? { spec: fields } : {}),
    });
    m.obj.metadata.annotations = updated.metadata.annotations;
    m.obj.spec = updated.spec;
    this.keep(m.obj, updated);
  }

  /** Writes annotations (null removes one). */
  private async annotate(m: Managed<unknown>, annotations: Record<string, string | null>): Promise<void> {
    const updated = await this.kube.mergePatchCustom(this.type, m.key, { metadata: { annotations } });
    m.obj.metadata.annotations = updated.metadata.annotations;
    this.keep(m.obj, updated);
  }

  private keep(obj: ManagedObject, updated: ManagedObject): void {
    obj.metadata.finalizers = updated.metadata.finalizers;
    obj.metadata.resourceVersion = updated.metadata.resourceVersion;
    this.wrote(obj, updated.metadata.resourceVersion);
  }
}
