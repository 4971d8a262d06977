// Durations as kubectl prints ages (k8s.io/apimachinery/pkg/util/duration.HumanDuration), so
// "5m" here means what it means in `kubectl get`.

export function humanDuration(millis: number): string {
  const seconds = Math.trunc(millis / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${String(seconds)}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${String(minutes)}m` : `${String(minutes)}m${String(s)}s`;
  }
  if (minutes < 180) return `${String(minutes)}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${String(hours)}h` : `${String(hours)}h${String(m)}m`;
  }
  if (hours < 48) return `${String(hours)}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${String(days)}d` : `${String(days)}d${String(h)}h`;
  }
  if (hours < 24 * 365 * 2) return `${String(days)}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const d = days % 365;
    return d === 0 ? `${String(years)}y` : `${String(years)}y${String(d)}d`;
  }
  return `${String(years)}y`;
}

/** The age of an RFC 3339 time at `now`, as kubectl prints it; "<unknown>" for none. */
export function ageOf(time: string | Date | null | undefined, now: number): string {
  if (time === undefined || time === null) return "<unknown>";
  const at = typeof time === "string" ? Date.parse(time) : time.getTime();
  return Number.isFinite(at) ? humanDuration(now - at) : "<unknown>";
}
