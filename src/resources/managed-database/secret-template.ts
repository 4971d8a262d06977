// The template language of spec.connectionSecret.extraData: Go-template look-alikes that only
// ever name a key of the connection Secret, `{{ .host }}` or `{{ index . "ca.crt" }}`. Anything
// else a Go template could hold (a pipe, a function, a trim marker, an unclosed `{{`) is refused
// with the key named, never copied into the Secret as written: an application would otherwise
// get a URL with `{{ .x | upper }}` in it and fail far from the cause.

/** The connection Secret's keys a template may name (secondary-host only exists on some databases). */
export const TEMPLATE_KEYS = ["type", "provider", "host", "port", "username", "password", "database", "uri", "ca.crt", "secondary-host"] as const;

/** One placeholder, anchored where the scan stands (sticky). */
const placeholder = /\{\{\s*(?:\.([A-Za-z0-9_]+)|index\s+\.\s+"([^"]+)")\s*\}\}/y;

export type TemplatePart = { text: string } | { key: string };

/** Why `template` is not one the operator renders, or the parts it is made of. */
export function parseTemplate(template: string): { parts: TemplatePart[] } | { problem: string } {
  const parts: TemplatePart[] = [];
  let at = 0;
  while (at < template.length) {
    const open = template.indexOf("{{", at);
    const text = template.slice(at, open === -1 ? undefined : open);
    const strayClose = text.indexOf("}}");
    if (strayClose !== -1) return { problem: `"}}" at offset ${String(at + strayClose)} closes no "{{"` };
    if (text !== "") parts.push({ text });
    if (open === -1) break;
    placeholder.lastIndex = open;
    const m = placeholder.exec(template);
    if (m === null) {
      const close = template.indexOf("}}", open + 2);
      if (close === -1) return { problem: `"{{" at offset ${String(open)} is never closed with "}}"` };
      return { problem: `${template.slice(open, close + 2)} is not a supported form: only {{ .key }} and {{ index . "key" }} (no pipes, functions or other actions)` };
    }
    const key = m[1] ?? m[2] ?? "";
    if (!(TEMPLATE_KEYS as readonly string[]).includes(key)) return { problem: `${m[0]} names no key of the connection Secret (${TEMPLATE_KEYS.join(", ")})` };
    parts.push({ key });
    at = placeholder.lastIndex;
  }
  return { parts };
}

/** The problem with each extraData entry that cannot be rendered, keyed by its Secret key. */
export function extraDataProblems(extraData: Record<string, string>): { key: string; problem: string }[] {
  return Object.entries(extraData).flatMap(([key, template]) => {
    const parsed = parseTemplate(template);
    return "problem" in parsed ? [{ key, problem: parsed.problem }] : [];
  });
}

/** The message a refused entry gets, naming it as the API server does (extraData[key]). */
export const extraDataMessage = (key: string, problem: string): string => `connectionSecret.extraData[${key}]: ${problem}`;

/**
 * Renders an extraData value from the Secret's standard keys; throws naming the entry when its
 * template is refused or names a key this database's Secret lacks (secondary-host without a
 * standby).
 */
export function renderTemplate(key: string, template: string, data: Readonly<Record<string, string>>): string {
  const parsed = parseTemplate(template);
  if ("problem" in parsed) throw new Error(extraDataMessage(key, parsed.problem));
  return parsed.parts.map((p) => {
    if ("text" in p) return p.text;
    // Only the Secret's own keys: a key named like an Object member is never read from its prototype.
    const v = Object.hasOwn(data, p.key) ? data[p.key] : undefined;
    if (v === undefined) throw new Error(extraDataMessage(key, `the key "${p.key}" is not in this database's Secret`));
    return v;
  }).join("");
}

/** A regular expression as a CEL string literal. */
const celString = (re: string): string => `'${re.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Admission's cheap copy of parseTemplate, on one extraData value (a rule on the map's values, so
 * the API server names the key in its error): every `{{` and every `}}` belongs to a placeholder
 * naming a known key. CEL has no scanner, so it counts (findAll, non-overlapping): a rare mix such
 * as `{{{ .host }}` passes here and is refused by the operator (InvalidSpec), the authority.
 */
function extraDataValueRule(): { rule: string; message: string } {
  const dotted = TEMPLATE_KEYS.filter((k) => /^[A-Za-z0-9_]+$/.test(k)).map(escapeRe).join("|");
  const any = TEMPLATE_KEYS.map(escapeRe).join("|");
  const known = celString(String.raw`\{\{\s*(\.(${dotted})|index\s+\.\s+"(${any})")\s*\}\}`);
  return {
    // CRD rules have no cel.bind: the placeholders are counted twice.
    rule: `self.findAll(${celString(String.raw`\{\{`)}).size() == self.findAll(${known}).size() && self.findAll(${celString(String.raw`\}\}`)}).size() == self.findAll(${known}).size()`,
    message: `a template may only hold {{ .key }} or {{ index . "key" }} naming a key of the connection Secret (${TEMPLATE_KEYS.join(", ")}): no pipes, functions, other actions or unpaired braces`,
  };
}

/** The CRD's rule on each extraData value. */
export const extraDataTemplateRule = extraDataValueRule();
