// Optional state file: written atomically (temp file + rename) shortly after each change
// and on close, read at start, so a restarted emulator keeps its objects and id counters.
// It holds database passwords and TLS private keys, so only its owner may read it.
import { existsSync, readFileSync } from "node:fs";
import { open, rename } from "node:fs/promises";
import { z } from "zod";
import type { SerializedState } from "./store.ts";

const fileSchema = z.object({
  version: z.literal(1),
  savedAt: z.number(),
  databases: z.array(z.looseObject({ id: z.number() })),
  nodebalancers: z.array(z.looseObject({ id: z.number() })),
  firewalls: z.array(z.looseObject({ id: z.number() })),
  vpcs: z.array(z.looseObject({ id: z.number() })).optional(),
  reservedIps: z.array(z.looseObject({ address: z.string() })).optional(),
  counters: z.looseObject({ database: z.number() }),
  accounts: z.record(z.string(), z.looseObject({ databases: z.array(z.looseObject({ id: z.number() })) })).optional(),
});

export function loadStateFile(path: string): SerializedState | null {
  if (!existsSync(path)) return null;
  const parsed = fileSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
  if (!parsed.success) throw new Error(`state file ${path} is not an emulator state file: ${parsed.error.message}`);
  return parsed.data as unknown as SerializedState;
}

const OWNER_ONLY = 0o600;

export async function saveStateFile(path: string, data: SerializedState): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  // The mode given to open applies only to a new file: a temp file left by an earlier run keeps
  // its own, so it is narrowed before anything is written. The rename then replaces the state
  // file, whatever its mode was, with this one.
  const file = await open(tmp, "w", OWNER_ONLY);
  try {
    await file.chmod(OWNER_ONLY);
    await file.writeFile(JSON.stringify(data));
  } finally {
    await file.close();
  }
  await rename(tmp, path);
}

/** Coalesces bursts of mutations into one write. */
export class Saver {
  readonly #path: string;
  readonly #snapshot: () => SerializedState;
  #timer: NodeJS.Timeout | null = null;
  #writing: Promise<void> = Promise.resolve();

  constructor(path: string, snapshot: () => SerializedState) {
    this.#path = path;
    this.#snapshot = snapshot;
  }

  schedule(): void {
    if (this.#timer !== null) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.flush();
    }, 100);
    this.#timer.unref();
  }

  flush(): Promise<void> {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    this.#writing = this.#writing.then(() => saveStateFile(this.#path, this.#snapshot()));
    return this.#writing;
  }
}
