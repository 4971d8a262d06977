// The local control plane lives in src/local-cluster (the demo uses it too).
export * from "../../src/local-cluster/control-plane.ts";
