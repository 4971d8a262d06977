// Turns zod issues into the API's error list, naming the offending field the way the real
// API does (`configs[0].nodes[1].address`), and holds the field schemas both services share.
import { z } from "zod";
import { ApiError, type ApiErrorItem } from "./errors.ts";

export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}

const article = (noun: string): string => (/^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`);

function reasonFor(issue: z.core.$ZodIssue, field: string): string {
  // zod's own wording is rephrased the API's way: a missing field is required, a present one
  // of the wrong type says what it must be (parseBody reports inputs, so the two differ).
  if (issue.code === "invalid_type" && issue.message.startsWith("Invalid input")) {
    if (issue.input === undefined) return `${field} is required`;
    return `${field} must be ${article(issue.expected)}`;
  }
  return issue.message;
}

export function zodToApiError(error: z.ZodError): ApiError {
  const errors: ApiErrorItem[] = error.issues.map((issue) => {
    const field = fieldPath(issue.path);
    const reason = reasonFor(issue, field === "" ? "body" : field);
    return field === "" ? { reason } : { reason, field };
  });
  return new ApiError(400, errors);
}

export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const result = schema.safeParse(body ?? {}, { reportInput: true });
  if (!result.success) throw zodToApiError(result.error);
  return result.data;
}

export function label(min: number, max: number, pattern?: RegExp): z.ZodString {
  let s = z.string().min(min, { error: `Length must be ${min}-${max} characters` })
    .max(max, { error: `Length must be ${min}-${max} characters` });
  if (pattern !== undefined) {
    s = s.regex(pattern, { error: "Must only contain ASCII letters, numbers, dashes and underscores" });
  }
  return s;
}

export function intRange(min: number, max: number): z.ZodNumber {
  return z.number().int({ error: "Must be an integer" })
    .min(min, { error: `Must be between ${min} and ${max}` })
    .max(max, { error: `Must be between ${min} and ${max}` });
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T): z.ZodEnum<{ [K in T[number]]: K }> {
  return z.enum(values, { error: `Must be one of ${values.join(", ")}` });
}
