// An https config's certificate and key, from a kubernetes.io/tls Secret. The API never shows
// the key (`<REDACTED>`), so a changed certificate is found by comparing the SHA-1 fingerprint
// of the Secret's leaf certificate with the API's `ssl_fingerprint` (the spec: "SHA1
// fingerprint derived from the certificate"). Nothing here ever reaches a log or a status.
import { createPrivateKey, X509Certificate } from "node:crypto";
import type { KubeObject, SecretObject } from "../../runtime/managed.ts";

export interface TlsMaterial {
  /** tls.crt as PEM: the certificate, optionally followed by its chain. */
  certPem: string;
  /** tls.key as PEM. */
  keyPem: string;
  /** SHA-1 of the leaf certificate's DER, as upper-case hex pairs joined by colons. */
  fingerprint: string;
}

export const TLS_SECRET_TYPE = "kubernetes.io/tls";

const decode = (secret: SecretObject, key: string): string | undefined => {
  const v = secret.data?.[key];
  return v === undefined ? undefined : Buffer.from(v, "base64").toString("utf8");
};

/** The Secret's certificate and key, or why they cannot be used (never their content). */
export function readTlsSecret(obj: KubeObject): TlsMaterial | { invalid: string } {
  const secret = obj as SecretObject;
  if (secret.type !== TLS_SECRET_TYPE) return { invalid: `its type is ${secret.type ?? "Opaque"}, not ${TLS_SECRET_TYPE}` };
  const certPem = decode(secret, "tls.crt");
  const keyPem = decode(secret, "tls.key");
  if (certPem === undefined || certPem.trim() === "") return { invalid: "it has no tls.crt" };
  if (keyPem === undefined || keyPem.trim() === "") return { invalid: "it has no tls.key" };
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    return { invalid: "tls.crt is not a PEM certificate" };
  }
  let key;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    return { invalid: "tls.key is not a PEM private key" };
  }
  if (!cert.checkPrivateKey(key)) return { invalid: "tls.key does not match the certificate in tls.crt" };
  return { certPem, keyPem, fingerprint: cert.fingerprint };
}

/** Whether two fingerprints name the same certificate, whatever their separators and case. */
export function sameFingerprint(a: string, b: string): boolean {
  const norm = (s: string): string => s.replace(/[^0-9a-f]/gi, "").toLowerCase();
  return norm(a) !== "" && norm(a) === norm(b);
}
