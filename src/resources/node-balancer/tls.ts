// An https config's certificate and key, from a kubernetes.io/tls Secret. The API never shows
// the key (`<REDACTED>`), so a changed certificate is found by comparing the SHA-1 fingerprint
// of the Secret's leaf certificate with the API's `ssl_fingerprint` (the spec: "SHA1
// fingerprint derived from the certificate"). Nothing here ever reaches a log or a status.
import { createPrivateKey, X509Certificate } from "node:crypto";
import { reference, secretsType, type Decoded, type KubeObject, type Read, type SecretObject } from "../../runtime/contract.ts";
import { NodeBalancerReasons } from "./reasons.ts";
import type { NodeBalancerSpec } from "./schema.ts";

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
export function readTlsSecret(obj: KubeObject): Decoded<TlsMaterial> {
  const secret = obj as SecretObject;
  if (secret.type !== TLS_SECRET_TYPE) return { notReady: `its type is ${secret.type ?? "Opaque"}, not ${TLS_SECRET_TYPE}` };
  const certPem = decode(secret, "tls.crt");
  const keyPem = decode(secret, "tls.key");
  if (certPem === undefined || certPem.trim() === "") return { notReady: "it has no tls.crt" };
  if (keyPem === undefined || keyPem.trim() === "") return { notReady: "it has no tls.key" };
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    return { notReady: "tls.crt is not a PEM certificate" };
  }
  let key;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    return { notReady: "tls.key is not a PEM private key" };
  }
  if (!cert.checkPrivateKey(key)) return { notReady: "tls.key does not match the certificate in tls.crt" };
  return { value: { certPem, keyPem, fingerprint: cert.fingerprint } };
}

/** Whether two fingerprints name the same certificate, whatever their separators and case. */
export function sameFingerprint(a: string, b: string): boolean {
  const norm = (s: string): string => s.replace(/[^0-9a-f]/gi, "").toLowerCase();
  return norm(a) !== "" && norm(a) === norm(b);
}

/**
 * The most a TLS Secret's tls.crt and tls.key may hold together (base64, as the API serves them)
 * for the operator to read it: a certificate with its chain and key is a few KiB; a larger one
 * is TLSSecretInvalid, saying so.
 */
export const TLS_MAX_BYTES = 64 * 1024;

/**
 * The https configs' TLS Secrets: decoded once per pass by the runtime, and a renewed certificate
 * wakes the NodeBalancers that use it.
 */
export const tlsSecretsRead: Read = {
  type: secretsType, scope: "namespaces",
  selectors: { fieldSelector: `type=${TLS_SECRET_TYPE}`, content: { byName: { maxBytes: TLS_MAX_BYTES, keys: ["tls.crt", "tls.key"] } } },
  why: "TLS Secrets an https config names (tlsSecretRef): listed and watched as metadata only, the one named read by name (tls.crt and tls.key)",
};

export const tlsReference = reference<NodeBalancerSpec, TlsMaterial>({
  name: "tls",
  // TLS Secrets (a field selector) are watched as metadata only: no private key is ever listed or
  // cached for being a TLS Secret. The one an https config names is read by name (tls.crt and
  // tls.key only) and kept while a NodeBalancer names it: a pass plans and sends the config with
  // it in hand (a rebuild for a node change sends it again), and its watch still sees a renewal,
  // which is read again and wakes the NodeBalancers that use it.
  target: tlsSecretsRead,
  names: (spec) => spec.configs.flatMap((c) => (c.protocol === "https" && c.tlsSecretRef !== undefined ? [c.tlsSecretRef.name] : [])),
  decode: readTlsSecret,
  reasons: { notFound: NodeBalancerReasons.TLSSecretNotFound, notReady: NodeBalancerReasons.TLSSecretInvalid },
  notFoundHint: `(a Secret of type ${TLS_SECRET_TYPE} with tls.crt and tls.key is needed; e.g. kubectl create secret tls NAME --cert=FILE --key=FILE)`,
  required: (m) => m.policies.management === "Manage",
});
