// Fixed reference data: regions (with the capabilities that gate creation), database
// engines and database node types. Values follow the real API's shapes.
export interface Region {
  id: string;
  capabilities: string[];
}

const BOTH = ["Managed Databases", "NodeBalancers"];

export const REGIONS: readonly Region[] = [
  "ap-west", "ap-south", "ap-southeast", "ap-northeast", "ca-central", "eu-central", "eu-west",
  "us-central", "us-east", "us-southeast", "us-west", "us-iad", "us-ord", "fr-par", "nl-ams", "se-sto",
  "jp-osa", "in-maa", "id-cgk", "br-gru", "it-mil", "us-sea", "us-lax", "us-mia", "es-mad", "gb-lon", "au-mel",
].map((id) => ({ id, capabilities: BOTH }));

export function findRegion(id: string): Region | undefined {
  return REGIONS.find((r) => r.id === id);
}

export interface EngineInfo {
  engine: "mysql" | "postgresql" | "valkey";
  id: string;
  version: string;
}

export const ENGINES: readonly EngineInfo[] = [
  { engine: "mysql", id: "mysql/8", version: "8" },
  ...["13", "14", "15", "16", "17"].map((v) => ({ engine: "postgresql" as const, id: `postgresql/${v}`, version: v })),
];

/**
 * Valkey, which spec 4.234.0 documents in limited availability (LA): listed and creatable only
 * where the emulator is configured to offer it (config `valkey: true`), as an account without
 * access to a limited-availability feature would not see it. GUESS (databases/facts.md): its
 * engine id and version (`valkey/8`, the major Valkey releases in 2025–2026) are not recorded.
 */
export const VALKEY_ENGINES: readonly EngineInfo[] = [{ engine: "valkey", id: "valkey/8", version: "8" }];

/** The engines GET /databases/engines lists, and a create may ask for. */
export const offeredEngines = (valkey: boolean): readonly EngineInfo[] => (valkey ? [...ENGINES, ...VALKEY_ENGINES] : ENGINES);

export interface DatabaseType {
  id: string;
  label: string;
  class: "nanode" | "standard" | "dedicated";
  vcpus: number;
  memory: number;
  disk: number;
  /** What total_disk_size_gb reports for a cluster of this type. */
  totalDiskGb: number;
  monthly: number;
}

function type(id: string, label: string, cls: DatabaseType["class"], vcpus: number, memoryGb: number, diskGb: number, monthly: number): DatabaseType {
  return { id, label: `DBaaS - ${label}`, class: cls, vcpus, memory: memoryGb * 1024, disk: diskGb * 1024, totalDiskGb: Math.round(diskGb * 0.6), monthly };
}

export const DATABASE_TYPES: readonly DatabaseType[] = [
  type("g6-nanode-1", "Nanode 1GB", "nanode", 1, 1, 25, 15),
  type("g6-standard-1", "Linode 2GB", "standard", 1, 2, 50, 30),
  type("g6-standard-2", "Linode 4GB", "standard", 2, 4, 80, 60),
  type("g6-standard-4", "Linode 8GB", "standard", 4, 8, 160, 120),
  type("g6-standard-6", "Linode 16GB", "standard", 6, 16, 320, 240),
  type("g6-standard-8", "Linode 32GB", "standard", 8, 32, 640, 480),
  type("g6-dedicated-2", "Dedicated 4GB", "dedicated", 2, 4, 80, 65),
  type("g6-dedicated-4", "Dedicated 8GB", "dedicated", 4, 8, 160, 130),
  type("g6-dedicated-8", "Dedicated 16GB", "dedicated", 8, 16, 320, 260),
  type("g6-dedicated-16", "Dedicated 32GB", "dedicated", 16, 32, 640, 520),
];

export function findDatabaseType(id: string): DatabaseType | undefined {
  return DATABASE_TYPES.find((t) => t.id === id);
}

export function renderDatabaseType(t: DatabaseType): Record<string, unknown> {
  const price = (n: number) => ({ price: { hourly: Math.round((t.monthly * n) / 730 * 1000) / 1000, monthly: t.monthly * n }, quantity: n });
  return {
    class: t.class,
    deprecated: false,
    disk: t.disk,
    engines: { mysql: [price(1), price(3)], postgresql: [price(1), price(3)] },
    id: t.id,
    label: t.label,
    memory: t.memory,
    vcpus: t.vcpus,
  };
}
