// The start-up check that a kind reads only what its definition declares (src/runtime/reads.ts).
import type { ResourceType } from "../kube/types.ts";
import { API_GROUP } from "./kind-definition.ts";
import { describeRead, readKey, type Read } from "./reads.ts";

/**
 * The reads `kind` declares, by key, with the check that what it uses is among them: its own
 * type and the operator's other kinds (whole: no selectors) need no declaration.
 */
export class DeclaredReads {
  private readonly byKey: Map<string, Read>;
  private readonly kind: string;
  private readonly own: ResourceType;

  constructor(kind: string, own: ResourceType, reads: readonly Read[]) {
    this.kind = kind;
    this.own = own;
    this.byKey = new Map(reads.map((r) => [readKey(r), r]));
  }

  /** The declaration `r` names; throws (a start-up error) when the kind's definition does not declare it. */
  check(r: Read, usedBy: string): Read {
    const t = r.type;
    const wholeKind = r.scope === "namespaces" && r.selectors === undefined && r.gate === undefined;
    if (wholeKind && (t.group === API_GROUP || (t.group === this.own.group && t.plural === this.own.plural))) return r;
    const found = this.byKey.get(readKey(r));
    if (found === undefined) {
      throw new Error(`${this.kind}: ${usedBy} reads ${describeRead(r)} (${r.scope}), which its definition's reads do not declare: add it to \`reads\` in the kind's definition.ts`);
    }
    return found;
  }
}
