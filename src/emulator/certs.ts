// Real, parseable X.509 certificates without spawning openssl: a minimal DER encoder and an
// EC P-256 key from node:crypto. Used for each database's CA certificate and, in tests, for
// the NodeBalancer https certificates whose fingerprint and common name the API derives.
import { createHash, generateKeyPairSync, randomBytes, sign, X509Certificate } from "node:crypto";

function len(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), len(body.length), body]);
}

const seq = (...c: Buffer[]): Buffer => tlv(0x30, ...c);
const set = (...c: Buffer[]): Buffer => tlv(0x31, ...c);

function oid(dotted: string): Buffer {
  const parts = dotted.split(".").map(Number);
  const bytes: number[] = [40 * (parts[0] ?? 0) + (parts[1] ?? 0)];
  for (const part of parts.slice(2)) {
    const chunk: number[] = [];
    let v = part;
    do { chunk.unshift(v & 0x7f); v = Math.floor(v / 128); } while (v > 0);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i] = (chunk[i] ?? 0) | 0x80;
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function integer(bytes: Buffer): Buffer {
  const b = (bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes;
  return tlv(0x02, b);
}

function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, "").slice(0, 14) + "Z";
  // UTCTime up to 2049, GeneralizedTime after (RFC 5280 §4.1.2.5).
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2))) : tlv(0x18, Buffer.from(iso));
}

function name(commonName: string, organization?: string): Buffer {
  const rdns = [];
  if (organization !== undefined) rdns.push(set(seq(oid("2.5.4.10"), tlv(0x0c, Buffer.from(organization)))));
  rdns.push(set(seq(oid("2.5.4.3"), tlv(0x0c, Buffer.from(commonName)))));
  return seq(...rdns);
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  const parts = [oid(id)];
  if (critical) parts.push(tlv(0x01, Buffer.from([0xff])));
  parts.push(tlv(0x04, value));
  return seq(...parts);
}

export interface GeneratedCertificate {
  certPem: string;
  keyPem: string;
}

export function generateCertificate(opts: { commonName: string; ca?: boolean; organization?: string; days?: number }): GeneratedCertificate {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const spki = publicKey.export({ type: "spki", format: "der" });
  const ecdsaSha256 = seq(oid("1.2.840.10045.4.3.2"));
  const subject = name(opts.commonName, opts.organization);
  const now = Date.now();
  const ski = createHash("sha1").update(spki).digest();
  const serial = randomBytes(16);
  // Positive and minimal (DER forbids a leading zero byte before a byte < 0x80), else
  // OpenSSL rejected about one serial in 256 with "illegal padding".
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x40;
  const exts = [
    extension("2.5.29.19", true, opts.ca === true ? seq(tlv(0x01, Buffer.from([0xff]))) : seq()),
    // keyCertSign + cRLSign for a CA, digitalSignature + keyEncipherment for a server.
    extension("2.5.29.15", true, opts.ca === true ? tlv(0x03, Buffer.from([0x01, 0x06])) : tlv(0x03, Buffer.from([0x05, 0xa0]))),
    extension("2.5.29.14", false, tlv(0x04, ski)),
  ];
  if (opts.ca !== true) exts.push(extension("2.5.29.17", false, seq(tlv(0x82, Buffer.from(opts.commonName)))));
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    ecdsaSha256,
    subject,
    seq(time(new Date(now - 3_600_000)), time(new Date(now + (opts.days ?? 3650) * 86_400_000))),
    subject,
    spki,
    tlv(0xa3, seq(...exts)),
  );
  const signature = sign("sha256", tbs, { key: privateKey, dsaEncoding: "der" });
  const der = seq(tbs, ecdsaSha256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const b64 = der.toString("base64").replace(/(.{64})/g, "$1\n").trimEnd();
  const certPem = `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
  const keyPem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  // Parse it back: a malformed encoding must fail here, not in a client.
  new X509Certificate(certPem);
  return { certPem, keyPem };
}

/** One CA per emulator start; databases share it (each real cluster has its own project CA). */
export function generateDatabaseCa(): string {
  return generateCertificate({ commonName: "Linode Managed Database Emulator Project CA", ca: true, organization: "Linode API emulator" }).certPem;
}
