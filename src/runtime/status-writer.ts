// The status one reconcile builds and writes. Steps merge fields into it as they go; a write
// sends only the merge patch from what the server last had (the cached status, then each
// write), so an unchanged status costs nothing and a removed field is removed once.
import { isNotFound } from "../kube/errors.ts";
import { keyOf, type KubeApi, type ResourceType } from "../kube/types.ts";
import { setCondition, type ConditionInput } from "./conditions.ts";
import type { ManagedObject, ManagedStatus } from "./managed-object.ts";
import { applyMergePatch, mergePatch } from "./status-patch.ts";

export class StatusWriter {
  private readonly kube: KubeApi;
  private readonly type: ResourceType;
  private readonly obj: ManagedObject;
  private readonly onWrite: ((resourceVersion: string | undefined) => void) | undefined;
  /** The status as the server has it. */
  private written: ManagedStatus;

  /** `obj.status` becomes the status being built; `obj` must be the reconcile's private copy. */
  constructor(kube: KubeApi, type: ResourceType, obj: ManagedObject, onWrite?: (resourceVersion: string | undefined) => void) {
    this.kube = kube;
    this.type = type;
    this.obj = obj;
    this.onWrite = onWrite;
    this.written = structuredClone(obj.status ?? {});
  }

  /** Merges top-level fields into the status being built (a field replaces its old value whole). */
  merge(fields: Record<string, unknown>): void {
    this.obj.status = { ...this.obj.status, ...fields };
  }

  /** Sets the conditions and observedGeneration, then writes whatever differs from the server's copy. */
  async write(conditions: ConditionInput[], generation: number | undefined): Promise<void> {
    let next = this.obj.status?.conditions;
    for (const c of conditions) next = setCondition(next, c, generation);
    this.obj.status = { ...this.obj.status, conditions: next, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
    const patch = mergePatch(this.written, this.obj.status);
    if (patch === undefined) return;
    let resourceVersion: string | undefined;
    try {
      resourceVersion = (await this.kube.patchCustomStatus(this.type, keyOf(this.obj), patch)).metadata.resourceVersion;
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    this.written = structuredClone(this.obj.status);
    this.onWrite?.(resourceVersion);
  }

  /** The object's status as the API server has it now (not the cache): what a one-shot action must check. */
  async readFresh(): Promise<{ status: ManagedStatus; resourceVersion: string | undefined }> {
    const fresh = await this.kube.getCustom<ManagedObject>(this.type, keyOf(this.obj));
    return { status: fresh.status ?? {}, resourceVersion: fresh.metadata.resourceVersion };
  }

  /**
   * Writes a merge patch of status fields at once, only if the object is still at
   * `resourceVersion` (else a 409), and folds it into the status being built, so the pass's
   * final write keeps it.
   */
  async commit(patch: Record<string, unknown>, resourceVersion: string | undefined): Promise<string | undefined> {
    const updated = await this.kube.patchCustomStatus(this.type, keyOf(this.obj), patch, resourceVersion !== undefined ? { resourceVersion } : {});
    this.written = applyMergePatch(this.written, patch) as ManagedStatus;
    this.obj.status = applyMergePatch(this.obj.status ?? {}, patch) as ManagedStatus;
    // Conditional on the very version the pass's copy is: the copy is now the version it made.
    // (After an unconditional write it stays older, so a later conditional write still notices
    // anyone else's change.)
    if (resourceVersion !== undefined && resourceVersion === this.obj.metadata.resourceVersion) this.obj.metadata.resourceVersion = updated.metadata.resourceVersion;
    this.onWrite?.(updated.metadata.resourceVersion);
    return updated.metadata.resourceVersion;
  }
}
