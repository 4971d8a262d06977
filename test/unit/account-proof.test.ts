// An object's ownership proof (status.externalIdProof) is an HMAC a previous release wrote: the
// same key and text must give the same proof after the key is held differently, or every
// object an upgraded operator looks at would read as not its own.
import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { LinodeClient } from "../../src/linode/index.ts";
import { Account } from "../../src/resources/shared/credentials.ts";

const earlier = (key: string | Uint8Array, text: string): string => createHmac("sha256", key).update(text).digest("base64url").slice(0, 32);

describe("an account's ownership proof", () => {
  it.each([
    ["the operator's token (a string, UTF-8)", "tök-" + "a".repeat(60)],
    ["the install's ownership key (bytes)", new Uint8Array(randomBytes(32))],
  ] as const)("is the HMAC earlier releases wrote, keyed by %s", (_what, key) => {
    const account = new Account("id", {} as LinodeClient, true, undefined, key);
    for (const text of ["ManagedDatabase/team-a/db-1/uid-1/12345", "", "ünïcode/é/42"]) expect(account.prove(text)).toBe(earlier(key, text));
    expect(account.prove("a")).not.toBe(account.prove("b"));
  });
});
