// ListWakes: a list that finds a cloud object changed wakes the resource managing it, only
// one that is wanted, and none once that resource let go of the object.
import { describe, expect, it } from "vitest";
import { ListWakes } from "../../src/resources/shared/list-wakes.ts";

describe("ListWakes", () => {
  it("wakes the resource that manages the changed object, if wanted; none once it is forgotten or handed on", () => {
    const woken: string[] = [];
    const settled = new Set(["ns/a"]);
    const w = new ListWakes((key) => woken.push(key), (key) => settled.has(key));
    w.seen(1, "ns/a");
    w.seen(2, "ns/b");
    w.changed(1);
    w.changed(2); // not wanted (on its way: it looks often anyway)
    w.changed(3); // no resource manages it
    expect(woken).toEqual(["ns/a"]);
    // Adopted by another resource: the first one's going does not drop the new one.
    w.seen(1, "ns/c");
    w.forget(1, "ns/a");
    settled.add("ns/c");
    w.changed(1);
    expect(woken).toEqual(["ns/a", "ns/c"]);
    w.forget(1, "ns/c");
    w.seen(2, undefined);
    w.changed(1);
    w.changed(2);
    expect(woken).toEqual(["ns/a", "ns/c"]);
    expect(w.size).toBe(0);
  });
});
