// The API's timestamps: UTC without a zone designator (`2024-10-03 20:48:05` or with a T).
export const parseApiTime = (s: string): number => Date.parse(/([zZ]|[+-]\d\d:\d\d)$/.test(s) ? s : `${s.replace(" ", "T")}Z`);
