// A throwaway self-signed certificate and key, generated per test run with openssl, so no
// private key is ever committed.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function selfSignedCert(commonName = "test.example"): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), "linode-client-tls-"));
  try {
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", `/CN=${commonName}`,
      "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"),
    ], { stdio: "ignore" });
    return { cert: readFileSync(join(dir, "cert.pem"), "utf8"), key: readFileSync(join(dir, "key.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A distinctive run of base64 from inside a PEM block: if it shows up in a log, the secret leaked. */
export function pemCore(pem: string): string {
  const body = pem.split("\n").filter((l) => l && !l.startsWith("-----")).join("");
  return body.slice(40, 80);
}
