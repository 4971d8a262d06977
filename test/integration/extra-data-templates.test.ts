// extraData templates through the operator on a real API server and the emulator: a template the
// API server's rule lets through but the operator does not render (`{{{ .host }}`: CEL counts
// braces, the operator parses) is InvalidSpec naming the key, before anything is created; on a
// running database the Secret keeps what it had, and the template is never written into it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestCluster } from "../harness/cluster.ts";
import { databaseHelpers, envOptions, mysql } from "../harness/database-helpers.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";

describe("extraData templates, through the operator", () => {
  const cluster = useTestCluster("extra-data");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, envOptions("legacy")); });
  afterAll(async () => { await env.stop(); });
  const { apply, readyDatabase, reasonOf, creates, secret } = databaseHelpers(cluster, () => env);
  const slipping = "jdbc:mysql://{{{ .host }}:3306";

  it("a template admission lets through is InvalidSpec naming its key, and nothing is created", async () => {
    const before = creates();
    await apply("odd", { ...mysql, connectionSecret: { extraData: { fine: "{{ .host }}", url: slipping } } });
    const synced = await reasonOf("odd", "Synced", "InvalidSpec");
    expect(synced.status).toBe("False");
    expect(synced.message).toContain('connectionSecret.extraData[url]: {{{ .host }} is not a supported form');
    await env.repass("ManagedDatabase", `${cluster.namespace}/odd`, 2);
    expect(creates()).toBe(before);
  });

  it("on a running database, the Secret keeps its last rendering; the new template never reaches it", async () => {
    await readyDatabase("orders", { ...mysql, connectionSecret: { extraData: { url: "jdbc:mysql://{{ .host }}:{{ .port }}" } } });
    const published = await secret("orders-connection");
    expect(published.url).toMatch(/^jdbc:mysql:\/\/[^{}]+:\d+$/);
    await apply("orders", { ...mysql, connectionSecret: { extraData: { url: slipping } } });
    expect((await reasonOf("orders", "Synced", "InvalidSpec")).message).toContain("extraData[url]");
    await env.repass("ManagedDatabase", `${cluster.namespace}/orders`, 2);
    expect((await secret("orders-connection")).url).toBe(published.url);
  });
});
