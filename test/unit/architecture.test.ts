// The layering DESIGN §6 draws, checked on the source's imports (type-only ones included): data
// flows one way, kube → runtime → resources → linode; the runtime has no import cycle; the CRD
// generator describes kinds it is given and imports none.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const src = join(root, "src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith(".ts") ? [path] : [];
  });
}

/** Each source file (relative to src/) with the source files it imports or re-exports from. */
const graph = new Map<string, string[]>(sources(src).map((file) => {
  const text = readFileSync(file, "utf8");
  const targets = [...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+)"/gms)]
    .map((m) => relative(src, resolve(dirname(file), m[1] ?? "")));
  return [relative(src, file), targets];
}));

const area = (file: string): string => file.split("/")[0] ?? "";
const importsFrom = (from: (f: string) => boolean, to: (f: string) => boolean): string[] =>
  [...graph].flatMap(([file, targets]) => (from(file) ? targets.filter(to).map((t) => `${file} → ${t}`) : []));

/** Every import cycle among `files`, each once, as a path. */
function cycles(files: Set<string>): string[] {
  const found: string[] = [];
  const done = new Set<string>();
  const walk = (file: string, path: string[]): void => {
    const at = path.indexOf(file);
    if (at >= 0) { found.push([...path.slice(at), file].join(" → ")); return; }
    if (done.has(file)) return;
    for (const t of graph.get(file) ?? []) if (files.has(t)) walk(t, [...path, file]);
    done.add(file);
  };
  for (const f of files) walk(f, []);
  return found;
}

describe("architecture", () => {
  it("the import scan sees the code (a file known to import another does)", () => {
    expect(graph.get("runtime/reconciler.ts")).toContain("runtime/managed.ts");
  });

  it("the runtime has no import cycle, type imports included", () => {
    expect(cycles(new Set([...graph.keys()].filter((f) => area(f) === "runtime")))).toEqual([]);
  });

  it("data flows one way: the Linode client and the Kubernetes client know no operator layer; the runtime knows no kind", () => {
    expect(importsFrom((f) => area(f) === "linode", (t) => ["kube", "runtime", "resources", "crd"].includes(area(t)))).toEqual([]);
    expect(importsFrom((f) => area(f) === "kube", (t) => ["linode", "runtime", "resources", "crd"].includes(area(t)))).toEqual([]);
    expect(importsFrom((f) => area(f) === "runtime", (t) => area(t) === "resources")).toEqual([]);
  });

  it("a kind's folder (and the shared parts kinds build on) reaches the runtime only through its contract", () => {
    const kindFiles = (f: string): boolean => /^resources\/[^/]+\//.test(f);
    expect(importsFrom(kindFiles, (t) => area(t) === "runtime" && t !== "runtime/contract.ts")).toEqual([]);
    expect(importsFrom(kindFiles, (t) => area(t) === "kube" || area(t) === "crd")).toEqual([]);
    // The contract is read: the kinds do import it.
    expect(importsFrom(kindFiles, (t) => t === "runtime/contract.ts").length).toBeGreaterThan(10);
  });

  it("the CRD generator imports no kind, and no kind imports the generator: it renders the definitions it is given", () => {
    expect(importsFrom((f) => area(f) === "crd", (t) => area(t) === "resources")).toEqual([]);
    expect(importsFrom((f) => area(f) === "resources", (t) => area(t) === "crd")).toEqual([]);
  });
});
