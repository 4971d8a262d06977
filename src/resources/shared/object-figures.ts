// Figures of a cloud object that move by themselves (a transfer counter, a restore window) as
// Prometheus gauges, per resource, instead of in its status: status is written only when the
// object changes, and a counter moving alone would write it on every look. Kept in memory from
// what the looks read anyway (no call of their own), exported at scrape time for the resources
// that still exist: a deleted one's series disappear with it.
import { Gauge, type Registry } from "prom-client";

interface Figures { namespace: string; name: string; id: number; values: Record<string, number> }

const labelNames = ["namespace", "name", "id"] as const;
type Labels = Record<(typeof labelNames)[number], string>;

export class ObjectFigures {
  private readonly figures = new Map<string, Figures>();
  private readonly exists: (namespace: string, name: string) => boolean;

  constructor(exists: (namespace: string, name: string) => boolean) {
    this.exists = exists;
  }

  /** The object's figures now (a figure undefined is not known: not exported). */
  set(namespace: string, name: string, id: number, values: Record<string, number | null | undefined>): void {
    const known = Object.fromEntries(Object.entries(values).filter((e): e is [string, number] => typeof e[1] === "number" && Number.isFinite(e[1])));
    if (Object.keys(known).length === 0) this.figures.delete(`${namespace}/${name}`);
    else this.figures.set(`${namespace}/${name}`, { namespace, name, id, values: known });
  }

  forget(namespace: string, name: string): void {
    this.figures.delete(`${namespace}/${name}`);
  }

  /** Objects with figures kept (a gauge: back to its steady size after deletions). */
  get size(): number {
    return this.figures.size;
  }

  /** A gauge of one figure per object. */
  gauge(registry: Registry, name: string, help: string, figure: string): void {
    const current = (): Figures[] => this.current();
    new Gauge({
      name, help, labelNames, registers: [registry],
      collect() { this.reset(); for (const f of current()) { const v = f.values[figure]; if (v !== undefined) this.set(labelsOf(f), v); } },
    });
  }

  /** A gauge of several figures per object, told apart by `label` (figure → its value of the label). */
  gaugeBy(registry: Registry, name: string, help: string, label: string, figures: Record<string, string>): void {
    const current = (): Figures[] => this.current();
    new Gauge({
      name, help, labelNames: [...labelNames, label], registers: [registry],
      collect() {
        this.reset();
        for (const f of current()) for (const [figure, value] of Object.entries(figures)) { const v = f.values[figure]; if (v !== undefined) this.set({ ...labelsOf(f), [label]: value }, v); }
      },
    });
  }

  /** A resource gone without a delete of ours (deletionPolicy Retain, Observe) is forgotten here. */
  private current(): Figures[] {
    return [...this.figures].flatMap(([key, f]) => {
      if (this.exists(f.namespace, f.name)) return [f];
      this.figures.delete(key);
      return [];
    });
  }
}

const labelsOf = (f: Figures): Labels => ({ namespace: f.namespace, name: f.name, id: String(f.id) });
