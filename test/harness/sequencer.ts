// Starts the longest chain first: the real-node end to end (one file, mostly waiting on the
// kubelet and the image build), then the files on the shared control plane, then the rest.
// Within a project the base order holds (failed and slow first from the last run, else size).
import { BaseSequencer, type TestSpecification } from "vitest/node";

const RANK: Record<string, number> = { "real-cluster": 0, cluster: 1, offline: 2 };

export default class CriticalPathFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (s: TestSpecification): number => RANK[s.project.name] ?? 3;
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}
