// What the API derives from a submitted certificate: the common name and a fingerprint
// (spec: "SHA1 fingerprint derived from the certificate": SHA-1 of the DER, colon-separated
// upper-case hex, as X509Certificate.fingerprint gives it), and the check that the key fits.
import { createPrivateKey, X509Certificate } from "node:crypto";
import { ApiError, type ApiErrorItem } from "../errors.ts";

/** Requests may carry PEM line breaks as the two characters backslash-n. */
export function unescapePem(pem: string): string {
  return pem.replace(/\\n/g, "\n");
}

export interface CertInfo {
  commonName: string;
  fingerprint: string;
}

export function inspectCertificate(certPem: string, keyPem: string, prefix = ""): CertInfo {
  const errors: ApiErrorItem[] = [];
  let cert: X509Certificate | null = null;
  try {
    cert = new X509Certificate(unescapePem(certPem));
  } catch {
    errors.push({ field: `${prefix}ssl_cert`, reason: "Invalid SSL certificate" });
  }
  let key: ReturnType<typeof createPrivateKey> | null = null;
  try {
    key = createPrivateKey(unescapePem(keyPem));
  } catch {
    errors.push({ field: `${prefix}ssl_key`, reason: "Invalid SSL key" });
  }
  if (cert !== null && key !== null && !cert.checkPrivateKey(key)) {
    errors.push({ field: `${prefix}ssl_key`, reason: "SSL key does not match the certificate" });
  }
  if (errors.length > 0 || cert === null) throw new ApiError(400, errors);
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1] ?? "";
  return { commonName: cn, fingerprint: cert.fingerprint };
}
