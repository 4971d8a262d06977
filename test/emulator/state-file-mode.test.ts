// The state file holds database passwords and TLS private keys: it is written owner-only
// (0600), whatever the mode of a state file or temp file already there.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { saveStateFile } from "../../src/emulator/persistence.ts";
import { client, mysqlBody, start } from "./helpers.ts";

const M = "/databases/mysql/instances";

function stateFilePath(): string {
  return join(mkdtempSync(join(tmpdir(), "emu-mode-")), "state.json");
}

const modeOf = (path: string): number => statSync(path).mode & 0o777;

describe("the emulator's state file", () => {
  it("is written 0600, with the secrets it holds", async () => {
    const stateFile = stateFilePath();
    const emu = await start({ stateFile, rateLimits: false });
    await client(emu).post(M, mysqlBody());
    await emu.close();
    expect(modeOf(stateFile)).toBe(0o600);
    expect(readFileSync(stateFile, "utf8")).toMatch(/"password":"[^"]+"/);
  });

  it("narrows a state file that exists with wider permissions", async () => {
    const stateFile = stateFilePath();
    const first = await start({ stateFile, rateLimits: false });
    await client(first).post(M, mysqlBody());
    await first.close();
    chmodSync(stateFile, 0o644);
    const second = await start({ stateFile, rateLimits: false });
    await second.save();
    expect(modeOf(stateFile)).toBe(0o600);
    await second.close();
    expect(modeOf(stateFile)).toBe(0o600);
  });

  it("narrows a temp file left behind with wider permissions, and leaves none", async () => {
    const stateFile = stateFilePath();
    const emu = await start({ rateLimits: false });
    const data = emu.dump();
    await emu.close();
    const tmp = `${stateFile}.${String(process.pid)}.tmp`;
    writeFileSync(tmp, "left by a crashed run");
    chmodSync(tmp, 0o666);
    await saveStateFile(stateFile, data);
    expect(modeOf(stateFile)).toBe(0o600);
    expect(readdirSync(join(stateFile, ".."))).toEqual(["state.json"]);
  });
});
