// Which kind a person means: the names kubectl accepts for a custom resource (kind, plural,
// singular, short names, each optionally with the API group), case-insensitively, plus the
// kind spelled with hyphens (managed-database), as the docs write it.
import { API_GROUP, type KindDefinition } from "../runtime/kind-definition.ts";

const hyphenated = (kind: string): string => kind.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase();

/** Every name `def` answers to, lower-case. */
export function namesOf(def: KindDefinition): string[] {
  const bare = [def.kind.toLowerCase(), def.plural, def.singular, ...def.shortNames, hyphenated(def.kind)];
  return [...bare, ...[def.kind.toLowerCase(), def.plural, def.singular].map((n) => `${n}.${API_GROUP}`)];
}

/** The kind `name` names, or undefined. */
export function resolveKind(name: string, defs: readonly KindDefinition[]): KindDefinition | undefined {
  const wanted = name.toLowerCase();
  return defs.find((d) => namesOf(d).includes(wanted));
}

/** For a message: the names each kind answers to. */
export function kindNamesHelp(defs: readonly KindDefinition[]): string {
  return defs.map((d) => `${d.kind} (${[d.plural, ...d.shortNames, hyphenated(d.kind)].join(", ")})`).join("; ");
}
