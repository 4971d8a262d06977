// What the client may log. Request bodies are logged at debug for diagnosis only after
// every secret-bearing member is replaced; response bodies are never logged.

import { setOwn } from "./case.ts";

export const REDACTED = "[REDACTED]";

const secretKeys = new Set([
  "password", "root_password", "rootPassword", "token", "authorization", "Authorization",
  "ssl_key", "sslKey", "ssl_cert", "sslCert", "ca_certificate", "caCertificate",
]);

export function isSecretKey(key: string): boolean {
  return secretKeys.has(key);
}

export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) setOwn(out, k, isSecretKey(k) && v !== null && v !== undefined ? REDACTED : redact(v));
    return out;
  }
  return value;
}
