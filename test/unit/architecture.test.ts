// The layering docs/adding-a-kind.md draws, checked on the source's imports (type-only ones included): data
// flows one way, kube → runtime → resources → linode; the runtime has no import cycle; the CRD
// generator describes kinds it is given and imports none. Kinds meet only through published
// views: a file outside a kind's folder (another kind's, the CLI's, anything in src/) imports
// that kind only through its public.ts, and the registry (src/resources/index.ts) alone imports
// each kind's index.ts to list it; src/resources/shared is every kind's. Tests may reach a
// kind's internals: they are not scanned. Every import form counts: `import … from`, a bare
// `import "…"`, `export … from` and `import("…")`, read by TypeScript's own scanner (so an
// import-shaped line in a string or a comment does not).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
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

/** The relative module paths a source text imports, re-exports from, or imports bare or dynamically. */
const relativeImports = (text: string): string[] =>
  ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName).filter((name) => name.startsWith("."));

/** Each source file (relative to src/) with the source files it imports or re-exports from. */
const graph = new Map<string, string[]>(sources(src).map((file) => {
  const targets = relativeImports(readFileSync(file, "utf8")).map((name) => relative(src, resolve(dirname(file), name)));
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

  it("the import scan sees every form of import, and none in a string or a comment", () => {
    const text = [
      `import "./bare.ts";`, `import type { A } from "./type-only.ts";`, `import {\n  b,\n  c,\n} from "./multi-line.ts";`,
      `export * from "./star.ts";`, `export { d } from "./named.ts";`, `export type { E } from "./type-export.ts";`,
      `const f = await import("./dynamic.ts");`, `import { g } from "zod";`,
      "const s = `import h from \"./in-template.ts\"`;", `// import "./in-comment.ts";`,
    ].join("\n");
    expect(relativeImports(text)).toEqual(["./bare.ts", "./type-only.ts", "./multi-line.ts", "./star.ts", "./named.ts", "./type-export.ts", "./dynamic.ts"]);
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

  it("kinds meet only through published views: outside a kind's folder, only its public.ts is imported (and its index.ts by the registry)", () => {
    const kinds = readdirSync(join(src, "resources"), { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== "shared").map((e) => e.name);
    expect(kinds.length).toBeGreaterThanOrEqual(4);
    const kindOf = (f: string): string | undefined => kinds.find((k) => f.startsWith(`resources/${k}/`));
    const published = (t: string): boolean => t === `resources/${kindOf(t)}/public.ts`;
    const registry = (f: string, t: string): boolean => f === "resources/index.ts" && t === `resources/${kindOf(t)}/index.ts`;
    const crossings = [...graph].flatMap(([file, targets]) => targets
      .filter((t) => kindOf(t) !== undefined && kindOf(t) !== kindOf(file))
      .map((t) => ({ file, t })));
    expect(crossings.filter(({ file, t }) => !published(t) && !registry(file, t)).map(({ file, t }) => `${file} → ${t}`)).toEqual([]);
    // The views are read: the database kinds do meet (a snapshot and a pool read their database).
    expect(crossings.filter(({ file, t }) => kindOf(file) !== undefined && published(t)).length).toBeGreaterThan(5);
  });

  it("the CRD generator imports no kind, and no kind imports the generator: it renders the definitions it is given", () => {
    expect(importsFrom((f) => area(f) === "crd", (t) => area(t) === "resources")).toEqual([]);
    expect(importsFrom((f) => area(f) === "resources", (t) => area(t) === "crd")).toEqual([]);
  });
});
