// Public surface of the Linode API client. Typical use by a reconciler:
//
//   const linode = new LinodeClient({ token, baseUrl: process.env.LINODE_API_URL, registry, logger });
//   const db = await linode.databases.engine("mysql").findByLabel(label, { signal });
//   try { await linode.databases.mysql.update(id, { allowList }, { signal }); }
//   catch (err) { const c = classifyError(err); /* terminal | notFound | precondition | rateLimited | transient | cancelled */ }
//
// camelCase in and out; snake_case exists only on the wire.
export { LinodeClient } from "./client.ts";
export { DEFAULT_BASE_URL, defaultTimeouts, type CallOptions, type ClientLogger, type LinodeClientOptions, type TimeoutOptions } from "./http.ts";
export {
  LinodeApiError, LinodeError, LinodeResponseError, LinodeTransportError, classifyError, classifyStatus, isCancelled,
  isNotFound, isPrecondition, isPreconditionReason, isRateLimited, isTerminal, isTransient, wasNeverSent,
  type ApiErrorItem, type ErrorClassification, type LinodeErrorKind,
} from "./errors.ts";
export { defaultRetryPolicy, backoffDelay, type RetryPolicy } from "./retry.ts";
export { RateLimiter, TokenBucket, type RateLimiterOptions } from "./rate-limiter.ts";
export { and, compare, or, orderBy, serializeFilter, where, type FilterObject, type FilterValue } from "./filter.ts";
export { MAX_PAGE_SIZE, type Page, type PageRequest } from "./pagination.ts";
export type { ListAllOptions, ListOptions } from "./listing.ts";
export { createLinodeClientMetrics, type LinodeClientMetrics } from "./metrics.ts";
export { camelize, snakify, type Camelize } from "./case.ts";
export { redact } from "./redact.ts";
export {
  DatabaseEngineApi, DatabasesApi, databasePlatform, decodeCaCertificate,
  type Database, type DatabasePlatform, type DatabaseBackup, type DatabaseCreateRequest, type DatabaseCredentials, type DatabaseEngineInfo,
  type DatabaseSslCertificate, type DatabaseType, type DatabaseUpdateRequest, type MaintenanceWindow,
  type ForkInput, type MaintenanceWindowInput, type SnapshotCreateRequest,
} from "./databases.ts";
export {
  NodeBalancersApi,
  type Firewall, type NodeBalancer, type NodeBalancerConfig, type NodeBalancerConfigInput,
  type NodeBalancerConfigRebuildRequest, type NodeBalancerCreateRequest, type NodeBalancerFirewallsUpdateRequest, type NodeBalancerNode,
  type NodeBalancerNodeInput, type NodeBalancerStats, type NodeBalancerUpdateRequest, type NodeBalancerVpcConfig, type NodeBalancerVpcInput,
} from "./nodebalancers.ts";
export { ConnectionPoolsApi, type ConnectionPool, type ConnectionPoolCreateRequest, type ConnectionPoolMode, type ConnectionPoolUpdateRequest } from "./connection-pools.ts";
export { connectionPoolModes } from "./schemas/connection-pools.ts";
export { FirewallsApi, type FirewallDevice, type FirewallDeviceCreateRequest } from "./firewalls.ts";
export { LocksApi, type LockCreateRequest, type LockType, type ResourceLock } from "./locks.ts";
export { databaseEngines, databaseStatuses, type DatabaseEngine } from "./schemas/databases.ts";
export { tokenId } from "./token-id.ts";
export { VpcsApi, type Vpc } from "./vpcs.ts";
export { ProfileApi, type TokenProfile } from "./profile.ts";
export { grants, parseScopes, routeScopes, scopeOfRoute, scopeText, type GrantedScopes, type Scope, type ScopeLevel } from "./scopes.ts";
