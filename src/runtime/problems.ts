// What the spec asks that the API cannot do (observe's `unfixable`): a kind reports every
// problem it finds, and Synced names them all, so a user with two problems learns of both from
// one look instead of fixing one only to meet the next.

/** One problem: a Synced reason (constant CamelCase) and what to tell the user. */
export interface Problem { reason: string; message: string }

/**
 * The problems found, most important first (its reason is Synced's): a `false` or `undefined`
 * entry is one not found, so a kind lists each check as `cond && { reason, message }`.
 */
export function problems(...found: (Problem | false | undefined)[]): Problem[] {
  return found.filter((p): p is Problem => p !== false && p !== undefined);
}

/**
 * One Synced reason and message for them all: the first one's reason, and a message that names
 * every reason before any detail (a condition message is cut at 1,024 characters: the names
 * survive the cut), then each problem's own message. None: undefined.
 */
export function combined(list: readonly Problem[] | undefined): Problem | undefined {
  const [first, ...rest] = list ?? [];
  if (first === undefined) return undefined;
  if (rest.length === 0) return first;
  const all = [first, ...rest];
  const names = [...new Set(all.map((p) => p.reason))];
  return {
    reason: first.reason,
    message: `${String(all.length)} problems (${names.join(", ")}). ${all.map((p) => `${p.reason}: ${p.message.replace(/\.$/, "")}`).join(". ")}`,
  };
}
