// The real API's error envelope: {errors:[{reason, field?}]}. Handlers throw ApiError and
// the server turns it into that body, so every failure path looks the same on the wire.
export interface ApiErrorItem {
  reason: string;
  field?: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly errors: ApiErrorItem[];
  readonly headers: Record<string, string>;

  constructor(status: number, errors: ApiErrorItem[], headers: Record<string, string> = {}) {
    super(errors.map((e) => (e.field === undefined ? e.reason : `${e.field}: ${e.reason}`)).join("; "));
    this.status = status;
    this.errors = errors;
    this.headers = headers;
  }
}

export function notFound(): ApiError {
  return new ApiError(404, [{ reason: "Not found" }]);
}

export function badRequest(reason: string, field?: string): ApiError {
  return new ApiError(400, [field === undefined ? { reason } : { reason, field }]);
}

export function forbidden(reason = "Unauthorized"): ApiError {
  return new ApiError(403, [{ reason }]);
}
