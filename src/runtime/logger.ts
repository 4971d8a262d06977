// pino JSON logs. Secret-bearing fields are redacted by path as a second line of defence:
// the first is that no code logs them.
import { pino, type Logger as PinoLogger, type DestinationStream } from "pino";

export type Logger = Pick<PinoLogger, "info" | "warn" | "error" | "debug" | "child" | "level">;

export const redactPaths = [
  "token", "password", "*.password", "*.token", "authorization", "*.authorization",
  "headers.authorization", "*.headers.authorization", "ssl_key", "*.ssl_key", "sslKey", "*.sslKey",
  "ca_certificate", "*.ca_certificate", "caCertificate", "*.caCertificate", "data", "*.data", "stringData", "*.stringData",
];

export function createLogger(opts: { level?: string; name?: string } = {}, destination?: DestinationStream): PinoLogger {
  return pino({
    level: opts.level ?? "info",
    redact: { paths: redactPaths, censor: "[REDACTED]" },
    // "logger" names the program; "name" (with "namespace") is the object a line is about, as
    // controller-runtime logs it.
    base: { pid: process.pid, logger: opts.name ?? "linode-operator" },
    timestamp: pino.stdTimeFunctions.isoTime,
    // "level":"warn", not 40: what log pipelines and people match on.
    formatters: { level: (label) => ({ level: label }) },
  }, destination);
}
