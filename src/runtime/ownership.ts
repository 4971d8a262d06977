// Which cloud object a resource may act on: the one it recorded through the status subresource
// (status.externalId), never an annotation anyone with edit rights could write; and a cloud id
// belongs to one resource in the cluster (ExternalIdInUse for any other).
import { EXTERNAL_ID_ANNOTATION } from "./annotations.ts";
import { TerminalError } from "./errors.ts";
import type { AnyManagedKind, Managed, ManagedObject } from "./managed.ts";
import { ConditionReasons as R } from "./reasons.ts";

/**
 * The cloud id `obj` recorded: status.externalId, or, for an object last written by an operator
 * before that field existed, its external-id annotation where the status that operator wrote
 * (the kind's legacyId) confirms it.
 */
export function recordedIdOf(kind: AnyManagedKind, obj: ManagedObject): string | undefined {
  const recorded = obj.status?.externalId;
  if (typeof recorded === "string" && recorded !== "") return recorded;
  const annotation = obj.metadata.annotations?.[EXTERNAL_ID_ANNOTATION];
  return annotation !== undefined && annotation !== "" && kind.legacyId?.(obj) === annotation ? annotation : undefined;
}

export class Ownership {
  private readonly kind: AnyManagedKind;
  private readonly recorders: (id: string) => ManagedObject[];

  /** `recorders`: this kind's objects (any namespace the operator watches) whose recorded cloud id is `id`. */
  constructor(kind: AnyManagedKind, recorders: ((id: string) => ManagedObject[]) | undefined) {
    this.kind = kind;
    this.recorders = recorders ?? (() => []);
  }

  /**
   * The annotation is a copy for people and tools; one that disagrees with the record was
   * written by someone else, and following it would act on another object (someone else's).
   */
  refuseForgedId(m: Managed<unknown>): void {
    const copy = m.obj.metadata.annotations?.[EXTERNAL_ID_ANNOTATION];
    if (copy === undefined || copy === m.externalId) return;
    const reason = this.kind.idMismatchReason ?? R.ExternalIdMismatch;
    throw new TerminalError(reason, `the annotation ${EXTERNAL_ID_ANNOTATION} says ${copy}, but this resource recorded ${m.externalId ?? "no cloud object"}: the annotation is only a copy of status.externalId and is never followed, so nothing was done; remove it${m.externalId !== undefined ? ` (or set it back to ${m.externalId})` : ""}. To manage an existing ${this.kind.type.kind} on purpose, name its id in the spec`);
  }

  /** Which id this pass would act on is recorded by another resource that owns it, if any. */
  claimedElsewhere(m: Managed<unknown>): string | undefined {
    const named = this.kind.namedId?.(m.spec);
    for (const id of new Set([m.externalId, named])) {
      if (id !== undefined && this.ownerOtherThan(m, id) !== undefined) return id;
    }
    return undefined;
  }

  /**
   * Another object of this kind that owns cloud id `id`, if any: one that records it, where this
   * one does not; where both do (two adoptions racing within the caches' delay, or records
   * made before ids were exclusive), the one that created it over one that adopted it, then the
   * oldest.
   */
  ownerOtherThan(m: Managed<unknown>, id: string): ManagedObject | undefined {
    const others = this.recorders(id).filter((o) => o.metadata.uid !== m.obj.metadata.uid && recordedIdOf(this.kind, o) === id);
    if (others.length === 0) return undefined;
    if (m.externalId !== id) return others[0];
    const rank = (o: ManagedObject): string => {
      let adopted: boolean;
      try {
        adopted = this.kind.namedId?.(this.kind.parseSpec(o.spec)) === id;
      } catch {
        adopted = true;
      }
      return `${adopted ? 1 : 0}|${String(o.metadata.creationTimestamp ?? "")}|${o.metadata.namespace ?? ""}/${o.metadata.name}`;
    };
    const mine = rank(m.obj);
    return others.find((o) => rank(o) < mine);
  }
}
