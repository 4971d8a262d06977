// The runtime's public contract: everything a kind's folder (src/resources/<kind>/, and the
// shared parts kinds build on) may use of the runtime, and nothing else — the reconciler, the
// controller, caches and leases stay the runtime's own (test/unit/architecture.test.ts checks
// that kinds import the runtime only through this file).
export {
  cachedReadAge, canWrite, reference, referrersIndex,
  type AfterObserve, type ConfigMapObject, type EndpointSliceObject, type ServiceObject, type ConnectionDetails, type ConnectionSource, type Created, type Decoded, type Deferral, type ReadyToCreate,
  type ExternalClient, type ExternalReader, type KindModule, type KindParts, type LateInit, type KubeObject, type Managed, type ManagedKind,
  type ManagedObject, type ManagedStatus, type Observation, type Observed, type Policies, type PublishedConnection,
  type NodeObject, type Reference, type ReferenceDefinition, type ResourceType, type SecretObject, type Target, type Watch,
} from "./managed.ts";
export { kindRead, type Read } from "./reads.ts";
export { legacyIdFromStatusId } from "./kind-defaults.ts";
export { configMapsType, endpointSlicesType, nodesType, secretsType, servicesType } from "../kube/types.ts";
export {
  columns, reasonNames, resourceTypeOf, settingValue,
  type KindDefinition, type KindSetting, type SettingValues,
} from "./kind-definition.ts";
export { EXTERNAL_ID_ANNOTATION, isPaused } from "./annotations.ts";
export { getCondition, isTrue, readyAtGeneration } from "./conditions.ts";
export { NotSentError, RetryAfterError, TerminalError, errorMessage } from "./errors.ts";
export { problems, type Problem } from "./problems.ts";
export type { EventRecorder } from "./events.ts";
export type { Logger } from "./logger.ts";
export { ConditionReasons } from "./reasons.ts";
export { immutable, immutableOnceSet, immutableOptional, initializedOnAdoption, type CelRule } from "./schema-rules.ts";
export { FORBIDDEN_KEYS, emptyMap, isForbiddenKey, ownValue } from "./safe-keys.ts";
export type { ReadStore, Selectors } from "./stores.ts";
export { Timings, jittered, type PollIntervals } from "./timings.ts";
export type { ActionOutcome } from "./actions.ts";
